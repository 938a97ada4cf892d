"use strict";
// Who may use this web app, on every page before its own scripts. The personal link's
// token (on a LAN, the one-time pairing code) is traded once for a session secret, kept
// in this origin's localStorage: a page on another port of this machine cannot read it,
// while a cookie would be sent to every port. The token leaves the address bar at once.
// Every request then carries the secret in X-Ribbit-Session (api), a WebSocket in its
// protocol list (openSocket), and a download or the printable report, which the browser
// opens as a plain link, gets a one-use link for it (followLink).
const session = (() => {
  const key = "ribbit-session";
  const header = "X-Ribbit-Session";
  const notLoggedIn = "Not logged in: open the link `ribbitd web` printed (or run `ribbitd web --url`).";
  let memory = null;  // when this browser keeps no storage (some private modes)
  let problem = notLoggedIn;
  const kept = () => { try { return localStorage.getItem(key) || memory; } catch { return memory; } };
  const keep = (secret) => {
    memory = secret;
    try { if (secret) localStorage.setItem(key, secret); else localStorage.removeItem(key); } catch { /* memory only */ }
  };

  const address = new URL(location.href);
  const token = address.searchParams.get("token");
  if (token !== null) {
    address.searchParams.delete("token");
    history.replaceState(history.state, "", address.pathname + address.search + address.hash);
  }

  async function logIn() {
    const secret = kept();
    if (!token) return secret;
    // A browser already in (a paired phone opening an old link) stays in, and the old
    // code is not counted as a wrong one.
    if (secret) {
      const check = await fetch("/api/session", { headers: { [header]: secret }, cache: "no-store" }).catch(() => null);
      if (check?.ok) return secret;
    }
    try {
      const response = await fetch("/api/login", {
        method: "POST", cache: "no-store", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }),
      });
      if (!response.ok) { problem = (await response.text()).trim(); keep(null); return null; }
      const fresh = (await response.json()).session;
      keep(fresh);
      return fresh;
    } catch {
      problem = "The web app does not answer: is `ribbitd web` still running?";
      return null;
    }
  }
  const ready = logIn();

  async function secret() {
    await ready;
    return kept();
  }

  // fetch with the session; without one, a 401 that says what to do, as the server's would.
  async function api(path, init) {
    const current = await secret();
    if (!current) return new Response(problem + "\n", { status: 401, headers: { "Content-Type": "text/plain" } });
    const options = Object.assign({ cache: "no-store" }, init || {});
    options.headers = Object.assign({}, (init?.headers) || {}, { [header]: current });
    const response = await fetch(path, options);
    if (response.status === 401) { keep(null); problem = notLoggedIn; }  // ribbit-web restarted: the secret is gone
    return response;
  }

  // A WebSocket to this web app (null when not logged in); the server answers the "ribbit" protocol.
  async function openSocket(path) {
    const current = await secret();
    if (!current) return null;
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
    return new WebSocket(url, ["ribbit", "ribbit-session." + current]);
  }

  // Opens `path` (a download when `download`) through a one-use link; "" or what went wrong.
  async function followLink(path, download) {
    try {
      const response = await api("/api/link", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ path }),
      });
      if (!response.ok) return (await response.text()).trim();
      const url = (await response.json()).url;
      if (!download) { location.assign(url); return ""; }
      const link = document.createElement("a");
      link.href = url;
      link.download = "";
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
      return "";
    } catch {
      return "The web app does not answer: is `ribbitd web` still running?";
    }
  }

  return { api, openSocket, followLink, problem: () => problem };
})();

