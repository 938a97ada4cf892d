// A prescription as /api/preview and /api/details give it: the fields, the audiogram
// (the server's SVG, parsed as SVG, never as HTML) and a table per ear of its hearing
// levels and target gains.
function field(list, label, value) {
  if (value === undefined || value === null || value === "") return;
  list.append(el("dt", { text: label }), el("dd", { text: String(value) }));
}

function earTable(rx, ear, title) {
  const report = rx.ears[ear];
  const table = el("table", { class: "gains " + ear });
  const caption = el("caption", { text: title });
  if (!report.processed) caption.append(el("span", { class: "note", text: " — not prescribed: passed through unchanged" }));
  table.append(caption);
  table.append(el("thead", {}, el("tr", {},
    el("th", { scope: "col", text: "Frequency (Hz)" }), el("th", { scope: "col", text: "Hearing level (dB HL)" }),
    el("th", { scope: "col", text: "Target gain (dB)" }))));
  const frequencies = Object.keys(report.targetGainDB).map(Number).sort((a, b) => a - b);
  const body = el("tbody");
  for (const hz of frequencies) {
    const level = report.thresholdsDBHL[hz];
    const heard = level === undefined ? "–" : String(level).replace("-", "−") + (report.noResponseHz.includes(hz) ? " no response" : "");
    const gain = report.targetGainDB[hz];
    // One decimal, as `rx show` prints them.
    const target = !report.processed ? "–" : gain === null ? "off" : (gain > 0 ? "+" : "") + gain.toFixed(1).replace("-", "−");
    body.append(el("tr", {}, el("th", { scope: "row", text: String(hz) }), el("td", { text: heard }), el("td", { text: target })));
  }
  table.append(body);
  return table;
}

function showPrescription(box, data) {
  const rx = data.prescription;
  box.replaceChildren();
  box.append(el("h3", { class: "name", text: rx.name }));
  const facts = el("dl", { class: "facts" });
  field(facts, "Environment", rx.environment);
  field(facts, "Rule", rx.rule);
  field(facts, "Audiologist", rx.audiologist);
  field(facts, "Patient", rx.patient);
  field(facts, "Date", rx.date);
  if (data.entry) field(facts, "Loaded", data.entry.loadedAt.replace("T", " ").replace("Z", " UTC"));
  field(facts, "Signature", rx.signature);
  facts.append(el("dt", { text: "Output limit" }), el("dd", {}, ...earLimits(data.outputLimitDBSPL.left, data.outputLimitDBSPL.right)));
  field(facts, "Digital ceiling", decibels(rx.maxOutputDBFS) + " dBFS");
  field(facts, "Low-pass", rx.lowpassHz ? rx.lowpassHz + " Hz" : "none");
  field(facts, "Note", rx.note);
  if (data.file) field(facts, "File", data.file + " (" + data.kind + ")");
  if (data.entry) field(facts, "History id", data.entry.id);
  const figure = svgFigure(data.audiogramSVG, "audiogram");
  // The chart first (on a phone it is what shows), the facts beside it on a wide screen.
  const grid = el("div", { class: "rx-grid" }, figure, facts);
  if (data.gainSVG) grid.append(el("div", { class: "gain-chart" }, svgFigure(data.gainSVG, "gain-figure"), shortfall(rx)));
  grid.append(el("div", { class: "tables" }, earTable(rx, "right", "Right ear (O)"), earTable(rx, "left", "Left ear (X)")));
  const bands = ["right", "left"].filter((ear) => rx.ears[ear]?.bands)
    .map((ear) => el("div", { class: "band-table", tabindex: "0", role: "group", "aria-label": (ear === "right" ? "Right" : "Left") + " ear per band" },
      bandTable(rx.ears[ear].bands, ear)));
  if (bands.length > 0) grid.append(el("div", { class: "bands-tables" }, ...bands));
  box.append(grid);
}

// A server-made chart, parsed as SVG (never as HTML).
function svgFigure(text, kind) {
  const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
  const figure = el("figure", { class: kind });
  if (svg.nodeName === "svg") figure.append(document.importNode(svg, true));
  return figure;
}

// Where the fitting plays less than its rule asks, per ear and band (the largest gap of
// soft, average and loud speech), and the note for the audiologist: the same facts as
// `ribbitd rx show`.
function shortfall(rx) {
  const box = el("div", { class: "shortfall", id: "rx-shortfall" });
  const levels = [50, 65, 80];
  const items = [];
  for (const ear of ["right", "left"]) {
    for (const band of (rx.ears[ear]?.bands) || []) {
      const targets = [band.target50DB, band.target65DB, band.target80DB];
      const gains = [band.gain50DB, band.gain65DB, band.gain80DB];
      let worst = -1;
      for (let i = 0; i < 3; i++) if (band.cappedBy[i] && (worst < 0 || targets[i] - gains[i] > targets[worst] - gains[worst])) worst = i;
      if (worst < 0) continue;
      items.push(el("li", { class: ear, text: (ear === "right" ? "Right " : "Left ") + band.centreHz + " Hz: "
        + signed(targets[worst]) + " → " + signed(gains[worst]) + " dB at " + levels[worst] + " dB SPL (" + band.cappedBy[worst] + ")" }));
    }
  }
  if (items.length === 0) {
    box.append(el("p", { text: "Every band plays its target (ribbit's maximum gain: +" + rx.maximumGainDB + " dB)." }));
  } else {
    box.append(el("p", { text: "Short of target (ribbit plays at most +" + rx.maximumGainDB + " dB; the output limits protect the ears):" }));
    box.append(el("ul", {}, ...items));
  }
  if (rx.clinicalNote) box.append(el("p", { class: "clinical-note", text: "Note for the audiologist: " + rx.clinicalNote }));
  return box;
}

