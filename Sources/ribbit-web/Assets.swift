import Hummingbird

/// The Home screen: one HTML page, its style sheet and its script, compiled into the binary (no
/// build step, nothing fetched from the network). The script is a file of its own because the
/// Content-Security-Policy allows no inline script.
enum Assets {
    static func response(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// What GET / answers without a session (401): self-contained, no script, no style sheet.
    static let loginHTML = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>ribbit: open your link</title>
        </head>
        <body>
        <h1>ribbit</h1>
        <p>This web app controls a hearing aid, so it needs its owner's personal link:
        open the link <code>ribbitd web</code> printed (or run <code>ribbitd web --url</code>).</p>
        </body>
        </html>

        """#

    /// The screens, in the nav's order: path and name.
    static let screens: [(path: String, name: String)] = [("/", "Home"), ("/prescriptions", "Prescriptions")]

    /// A screen's page: the shared head (the CSRF token in a meta tag, hex so it needs no
    /// escaping; the style sheet; the screen's own script) and header (the nav, the connection
    /// line), then the screen's main.
    static func screen(path: String, title: String, script: String, connecting: String, main: String, csrfToken: String) -> String {
        let nav = screens.map { "<a href=\"\($0.path)\"\($0.path == path ? " aria-current=\"page\"" : "")>\($0.name)</a>" }.joined()
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="csrf-token" content="\(csrfToken)">
            <title>\(title)</title>
            <link rel="stylesheet" href="/app.css">
            <script src="\(script)" defer></script>
            </head>
            <body>
            <header>
              <h1>ribbit</h1>
              <nav aria-label="Screens">\(nav)</nav>
              <p id="connection" role="status">\(connecting)</p>
            </header>
            <p id="message" role="alert" hidden></p>
            \(main)</body>
            </html>

            """
    }

    static func homeHTML(csrfToken: String) -> String {
        screen(
            path: "/", title: "ribbit", script: "/app.js", connecting: "Connecting to the hearing aid…", main: homeMain,
            csrfToken: csrfToken)
    }

    /// The Prescriptions screen: the history, drawn by /prescriptions.js from /api/history.
    static func prescriptionsHTML(csrfToken: String) -> String {
        screen(
            path: "/prescriptions", title: "ribbit: prescriptions", script: "/prescriptions.js", connecting: "Reading the history…",
            main: prescriptionsMain, csrfToken: csrfToken)
    }

    static let homeMain = #"""
        <main>
          <section class="card" aria-labelledby="rx-title">
            <h2 id="rx-title">Prescription</h2>
            <p id="rx-name" class="name">–</p>
            <dl>
              <dt>Environment</dt><dd id="rx-env">–</dd>
              <dt>Signature</dt><dd id="rx-signature">–</dd>
              <dt>Audiologist</dt><dd id="rx-audiologist">–</dd>
            </dl>
          </section>

          <section class="card" aria-labelledby="sound-title">
            <h2 id="sound-title">Sound</h2>
            <p id="output" class="state">–</p>
            <button id="pause" type="button" class="primary" disabled>Pause</button>
            <button id="bypass" type="button" aria-pressed="false" disabled>Bypass: off</button>
            <p class="hint">Bypass plays the world unprocessed, with the same delay.</p>
          </section>

          <section class="card" aria-labelledby="volume-title">
            <h2 id="volume-title">Volume</h2>
            <div class="volume">
              <button id="volume-down" type="button" aria-label="Softer by 1 dB" disabled>−</button>
              <output id="volume" aria-live="polite" aria-labelledby="volume-title">–</output>
              <button id="volume-up" type="button" aria-label="Louder by 1 dB" disabled>+</button>
            </div>
            <p id="volume-range" class="hint">–</p>
          </section>

          <section class="card" id="program-card" aria-labelledby="program-title">
            <h2 id="program-title">Program</h2>
            <fieldset id="programs" disabled>
              <legend>Listening program</legend>
              <label><input type="radio" name="program" value="quiet"> Quiet</label>
              <label><input type="radio" name="program" value="noisy"> Noisy</label>
              <label><input type="radio" name="program" value="outdoor"> Outdoor</label>
              <label><input type="radio" name="program" value="music"> Music</label>
              <label><input type="radio" name="program" value="auto"> Auto</label>
            </fieldset>
            <p id="program-reason" class="hint">–</p>
          </section>

          <section class="card" aria-labelledby="system-title">
            <h2 id="system-title">System</h2>
            <dl>
              <dt>JACK</dt><dd id="jack">–</dd>
              <dt>Latency</dt><dd id="latency">–</dd>
              <dt>Xruns</dt><dd id="xruns">–</dd>
              <dt>CPU</dt><dd id="cpu">–</dd>
            </dl>
          </section>
        </main>

        """#

    static let prescriptionsMain = #"""
        <main class="history">
          <h2 id="history-title" class="screen-title">Prescriptions</h2>
          <p class="hint">Every prescription loaded, by environment, newest first. Use switches to one; the active one is marked.</p>
          <div id="history" aria-labelledby="history-title"></div>
        </main>

        """#

    static let styleSheet = #"""
        :root { color-scheme: light; --ink: #000; --paper: #fff; --accent: #0040c0; --muted: #333; --line: #000; --warn: #8a0000; }
        * { box-sizing: border-box; }
        html { font-size: 125%; }
        body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; line-height: 1.4;
          color: var(--ink); background: var(--paper); }
        header { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 0 1rem;
          padding: 0.6rem 1rem; border-bottom: 3px solid var(--line); }
        h1 { margin: 0; font-size: 1.6rem; }
        h2 { margin: 0 0 0.5rem; font-size: 1.1rem; text-transform: uppercase; letter-spacing: 0.05em; }
        #connection { margin: 0; font-weight: 600; }
        #connection.down, #message { color: var(--warn); }
        #message { max-width: 70rem; margin: 0.8rem 0.6rem 0; padding: 0.6rem 0.8rem; border: 3px solid var(--warn); font-weight: 600;
          overflow-wrap: anywhere; }
        @media (min-width: 40rem) { #message { margin: 1rem auto 0; width: calc(100% - 2rem); } }
        main { display: grid; gap: 0.8rem; padding: 0.8rem 0.6rem; max-width: 70rem; margin: 0 auto; grid-template-columns: 1fr; }
        @media (min-width: 40rem) { main { grid-template-columns: 1fr 1fr; gap: 1rem; padding: 1rem; } .card { padding: 0.8rem 1rem 1rem; } }
        @media (min-width: 60rem) {
          main { grid-template-columns: 1fr 1fr 1fr; }
          #program-card { grid-column: span 2; }
        }
        .card { border: 3px solid var(--line); border-radius: 0.6rem; padding: 0.7rem 0.8rem 0.9rem; }
        .name { font-size: 1.6rem; font-weight: 700; margin: 0 0 0.5rem; overflow-wrap: anywhere; }
        .state { font-size: 1.4rem; font-weight: 700; margin: 0 0 0.7rem; }
        .hint { color: var(--muted); margin: 0.5rem 0 0; font-size: 0.9rem; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0; }
        dt { font-weight: 600; }
        dd { margin: 0; overflow-wrap: anywhere; }
        time { white-space: nowrap; }
        button { font: inherit; font-weight: 700; min-height: 3rem; padding: 0.4rem 1rem; border: 3px solid var(--line);
          border-radius: 0.5rem; background: var(--paper); color: var(--ink); cursor: pointer; }
        button.primary { display: block; width: 100%; min-height: 4.5rem; font-size: 1.5rem; background: var(--accent);
          border-color: var(--accent); color: #fff; margin-bottom: 0.7rem; }
        button[aria-pressed="true"] { background: var(--ink); color: var(--paper); }
        button:disabled, fieldset:disabled { opacity: 0.55; cursor: not-allowed; }
        #bypass { width: 100%; }
        :focus-visible { outline: 4px solid #ffbf00; outline-offset: 2px; box-shadow: 0 0 0 7px #000; }
        .volume { display: flex; align-items: center; gap: 0.6rem; }
        .volume button { flex: none; width: 3.8rem; min-height: 3.8rem; font-size: 2rem; line-height: 1; padding: 0; }
        .volume output { flex: 1; text-align: center; font-size: 1.7rem; font-weight: 700; white-space: nowrap; }
        fieldset { border: 0; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(6rem, 1fr)); gap: 0.5rem; }
        legend { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        fieldset label { display: flex; align-items: center; gap: 0.35rem; min-height: 3rem; padding: 0.3rem 0.4rem;
          border: 3px solid var(--line); border-radius: 0.5rem; font-weight: 600; cursor: pointer; }
        fieldset label:has(input:checked) { background: var(--ink); color: var(--paper); }
        input[type="radio"] { flex: none; width: 1.15rem; height: 1.15rem; margin: 0; accent-color: var(--accent); }
        nav { display: flex; gap: 0.4rem; margin-right: auto; }
        nav a { display: inline-flex; align-items: center; min-height: 2.6rem; padding: 0.2rem 0.7rem; border: 3px solid transparent;
          border-radius: 0.5rem; color: var(--ink); font-weight: 700; text-decoration: underline; }
        nav a[aria-current="page"] { border-color: var(--line); text-decoration: none; }
        .history { display: block; }
        .screen-title { font-size: 1.4rem; margin: 0.2rem 0 0; }
        .history > .hint { margin: 0.2rem 0 0.8rem; }
        .env { margin: 0 0 1.2rem; }
        .env h3 { font-size: 1.2rem; margin: 0 0 0.5rem; text-transform: capitalize; }
        .entries { list-style: none; margin: 0; padding: 0; display: grid; gap: 0.8rem; grid-template-columns: 1fr; }
        @media (min-width: 60rem) { .entries { grid-template-columns: 1fr 1fr; } }
        .entry.active { border-color: var(--accent); box-shadow: 0 0 0 3px var(--accent); }
        .entry .name { font-size: 1.3rem; margin: 0 0 0.4rem; }
        .badge { display: inline-block; margin-left: 0.4rem; padding: 0 0.5rem; border-radius: 0.4rem; background: var(--accent); color: #fff;
          font-size: 0.9rem; vertical-align: middle; }
        .actions { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-top: 0.7rem; }
        .actions a { display: inline-flex; align-items: center; min-height: 3rem; padding: 0.4rem 1rem; border: 3px solid var(--line);
          border-radius: 0.5rem; color: var(--ink); font-weight: 700; text-decoration: none; }
        button.use { background: var(--accent); border-color: var(--accent); color: #fff; }
        button.danger { border-color: var(--warn); color: var(--warn); }
        button.danger.confirm { background: var(--warn); color: #fff; }
        .confirm-box { flex-basis: 100%; display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; margin: 0.2rem 0 0;
          font-weight: 600; }
        .confirm-box p { flex-basis: 100%; margin: 0; }
        @media (prefers-color-scheme: dark) {
          :root { color-scheme: dark; --ink: #fff; --paper: #000; --accent: #7fb0ff; --muted: #ddd; --line: #fff; --warn: #ff8080; }
          button.primary, button.use, .badge, button.danger.confirm { color: #000; }
        }

        """#

    static let javaScript = #"""
        "use strict";
        // The Home screen: polls /api/status every second and sends the controls' requests with
        // the CSRF token from the page's meta tag. Every answer with a status redraws the page.
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const $ = (id) => document.getElementById(id);
        let current = null;
        let busy = false;

        function signed(db) {
          const text = Number.isInteger(db) ? String(db) : db.toFixed(1);
          return (db > 0 ? "+" : "") + text.replace("-", "−");
        }

        function showMessage(text) {
          const box = $("message");
          box.textContent = text || "";
          box.hidden = !text;
        }

        function render(status) {
          current = status;
          const connection = $("connection");
          connection.textContent = "Connected: ribbitd " + status.version;
          connection.classList.remove("down");
          const rx = status.prescription;
          $("rx-name").textContent = rx ? rx.name : "No prescription loaded";
          $("rx-env").textContent = rx ? rx.environment : "–";
          $("rx-signature").textContent = rx ? (rx.signature || "unsigned") : "–";
          $("rx-audiologist").textContent = rx && rx.audiologist ? rx.audiologist : "–";

          const output = { processing: "Playing", paused: "Paused: silent", bypassed: "Bypassed: unprocessed sound" };
          $("output").textContent = output[status.output] || status.output;
          const pause = $("pause");
          pause.disabled = false;
          pause.textContent = status.output === "paused" ? "Resume" : "Pause";
          const bypass = $("bypass");
          bypass.disabled = false;
          bypass.setAttribute("aria-pressed", status.output === "bypassed" ? "true" : "false");
          bypass.textContent = status.output === "bypassed" ? "Bypass: on" : "Bypass: off";

          const listening = status.listening;
          $("volume-down").disabled = !listening || listening.volumeDB <= listening.volumeMinDB;
          $("volume-up").disabled = !listening || listening.volumeDB >= listening.volumeMaxDB;
          $("volume").textContent = listening ? signed(listening.volumeDB) + " dB" : "–";
          $("volume-range").textContent = listening
            ? "Range " + signed(listening.volumeMinDB) + " to " + signed(listening.volumeMaxDB) + " dB"
            : "Load a prescription to set the volume.";
          $("programs").disabled = !listening;
          const chosen = listening ? (listening.chosenBy === "auto" ? "auto" : listening.program) : null;
          for (const radio of document.querySelectorAll('input[name="program"]')) {
            if (document.activeElement !== radio || !busy) radio.checked = radio.value === chosen;
          }
          let reason = "Load a prescription to choose a program.";
          if (listening) {
            reason = listening.chosenBy === "auto"
              ? "Playing " + listening.program + (listening.reason ? ": " + listening.reason : "")
              : listening.chosenBy === "wearer" ? "Playing " + listening.program + ", your choice"
              : "Playing " + listening.program + ", as the prescription's environment selects";
          }
          $("program-reason").textContent = reason;

          const jack = status.jack;
          $("jack").textContent = jack
            ? "Running, " + jack.sampleRate + " Hz, period " + jack.period
            : (status.jackProblem || "Not connected");
          $("latency").textContent = jack ? jack.latencyMilliseconds.toFixed(1) + " ms (" + jack.latencyFrames + " frames)" : "–";
          $("xruns").textContent = String(status.totalXruns);
          $("cpu").textContent = jack
            ? "ribbit " + jack.ribbitLoadPercent.toFixed(1) + "\u00a0%, JACK " + jack.dspLoadPercent.toFixed(1) + "\u00a0%"
            : "–";
        }

        let daemonDown = false;
        function disconnected(text) {
          current = null;
          daemonDown = true;
          const connection = $("connection");
          connection.textContent = "Not connected";
          connection.classList.add("down");
          $("output").textContent = "Unknown: not connected";
          showMessage(text);
          for (const id of ["pause", "bypass", "volume-down", "volume-up"]) $(id).disabled = true;
          $("programs").disabled = true;
        }

        async function refresh() {
          if (busy) return;
          try {
            const response = await fetch("/api/status", { cache: "no-store" });
            if (!response.ok) { disconnected((await response.text()).trim()); return; }
            render(await response.json());
            if (daemonDown) { daemonDown = false; showMessage(""); }
          } catch (error) {
            disconnected("The web app does not answer: is `ribbitd web` still running?");
          }
        }

        async function send(path, body) {
          busy = true;
          try {
            const response = await fetch(path, {
              method: "POST",
              headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
              body: JSON.stringify(body || {}),
            });
            if (response.ok) {
              showMessage("");
              render(await response.json());
            } else {
              showMessage((await response.text()).trim());
            }
          } catch (error) {
            showMessage("The web app does not answer: is `ribbitd web` still running?");
          } finally {
            busy = false;
          }
        }

        $("pause").addEventListener("click", () => send(current && current.output === "paused" ? "/api/resume" : "/api/pause"));
        $("bypass").addEventListener("click", () => send("/api/bypass", { on: !(current && current.output === "bypassed") }));
        $("volume-down").addEventListener("click", () => send("/api/volume", { stepDB: -1 }));
        $("volume-up").addEventListener("click", () => send("/api/volume", { stepDB: 1 }));
        for (const radio of document.querySelectorAll('input[name="program"]')) {
          radio.addEventListener("change", () => { if (radio.checked) send("/api/program", { program: radio.value }); });
        }
        refresh();
        setInterval(() => { if (!document.hidden) refresh(); }, 1000);

        """#

    static let prescriptionsJavaScript = #"""
        "use strict";
        // The Prescriptions screen: the history from /api/history, grouped by environment; Use
        // and Remove (after a confirmation in the page) send the CSRF token; the downloads are links.
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const $ = (id) => document.getElementById(id);
        let busy = false;

        function showMessage(text) {
          const box = $("message");
          box.textContent = text || "";
          box.hidden = !text;
        }

        function el(tag, attributes, ...children) {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(attributes || {})) {
            if (key === "text") node.textContent = value; else node.setAttribute(key, value);
          }
          for (const child of children) if (child) node.append(child);
          return node;
        }

        function pad(n) { return String(n).padStart(2, "0"); }
        function localDate(iso) {
          const d = new Date(iso);
          if (Number.isNaN(d.getTime())) return iso;
          return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes());
        }

        function entryCard(entry) {
          const item = el("li", { class: "card entry" + (entry.active ? " active" : ""), id: "entry-" + entry.id });
          const name = el("h4", { class: "name", text: entry.name });
          if (entry.active) name.append(el("span", { class: "badge", text: "Active" }));
          item.append(name);
          item.append(el("dl", {},
            el("dt", { text: "Rule" }), el("dd", { text: entry.rule || "–" }),
            el("dt", { text: "Audiologist" }), el("dd", { text: entry.audiologist || "–" }),
            el("dt", { text: "Loaded" }), el("dd", {}, el("time", { datetime: entry.loadedAt, text: localDate(entry.loadedAt) })),
            el("dt", { text: "Signature" }), el("dd", { text: entry.signature }),
            el("dt", { text: "History id" }), el("dd", { text: String(entry.id) })));
          const actions = el("div", { class: "actions" });
          if (!entry.active) {
            const use = el("button", { type: "button", class: "use", text: "Use" });
            use.addEventListener("click", () => post("/api/use", { id: entry.id }, "Now using " + entry.name + "."));
            actions.append(use);
          }
          actions.append(el("a", { href: "/api/history/" + entry.id + ".rx", download: "", text: "Export .rx" }));
          actions.append(el("a", { href: "/api/history/" + entry.id + ".png", download: "", text: "QR PNG" }));
          if (!entry.active) {
            const remove = el("button", { type: "button", class: "danger", "aria-expanded": "false", text: "Remove" });
            remove.addEventListener("click", () => confirmRemove(entry, actions, remove));
            actions.append(remove);
          }
          item.append(actions);
          return item;
        }

        function confirmRemove(entry, actions, remove) {
          const open = actions.querySelector(".confirm-box");
          if (open) { open.remove(); remove.setAttribute("aria-expanded", "false"); return; }
          const yes = el("button", { type: "button", class: "danger confirm", text: "Yes, remove it" });
          const no = el("button", { type: "button", text: "Cancel" });
          const box = el("div", { class: "confirm-box", role: "group", "aria-label": "Confirm removal" },
            el("p", { text: "Remove " + entry.name + " from the history? This cannot be undone." }), yes, no);
          yes.addEventListener("click", () => post("/api/remove", { id: entry.id }, "Removed " + entry.name + "."));
          no.addEventListener("click", () => { box.remove(); remove.setAttribute("aria-expanded", "false"); remove.focus(); });
          actions.append(box);
          remove.setAttribute("aria-expanded", "true");
          no.focus();
        }

        function render(entries) {
          const list = $("history");
          list.replaceChildren();
          $("connection").textContent = entries.length === 1 ? "1 prescription" : entries.length + " prescriptions";
          $("connection").classList.remove("down");
          if (entries.length === 0) {
            list.append(el("p", { class: "name", text: "No prescriptions yet: `ribbitd load RX` adds one." }));
            return;
          }
          // The active one's environment first, then the others by their newest; newest first in each.
          const groups = new Map();
          const active = entries.find((entry) => entry.active);
          if (active) groups.set(active.environment, []);
          for (const entry of entries.slice().reverse()) {
            if (!groups.has(entry.environment)) groups.set(entry.environment, []);
            groups.get(entry.environment).push(entry);
          }
          for (const [environment, members] of groups) {
            const id = "env-" + environment.replace(/[^A-Za-z0-9-]/g, "_");
            list.append(el("section", { class: "env", "aria-labelledby": id },
              el("h3", { id: id, text: environment }),
              el("ul", { class: "entries" }, ...members.map(entryCard))));
          }
        }

        async function load() {
          try {
            const response = await fetch("/api/history", { cache: "no-store" });
            if (!response.ok) {
              $("connection").textContent = "Cannot read the history";
              $("connection").classList.add("down");
              showMessage((await response.text()).trim());
              return;
            }
            render(await response.json());
          } catch (error) {
            showMessage("The web app does not answer: is `ribbitd web` still running?");
          }
        }

        async function post(path, body, done) {
          if (busy) return;
          busy = true;
          try {
            const response = await fetch(path, {
              method: "POST",
              headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
              body: JSON.stringify(body),
            });
            showMessage(response.ok ? "" : (await response.text()).trim());
            await load();
            if (response.ok) $("connection").textContent = done;
          } catch (error) {
            showMessage("The web app does not answer: is `ribbitd web` still running?");
          } finally {
            busy = false;
          }
        }

        load();

        """#
}
