import Foundation
import HTTPTypes
import Hummingbird
import RibbitStore

/// The page side of WebAccess: /session.js, which every page runs before its own scripts, and
/// the three calls it makes. `POST /api/login` `{"token": ...}` trades the link's token (or
/// pairing code) for a session secret; `GET /api/session` says whether a kept secret still
/// works; `POST /api/link` `{"path": ...}` gives a one-use link for a download or the
/// printable report, which the browser opens without the page's header.
enum SessionRoutes {
    static let script = "/session.js"
    static let loginPath = "/api/login"

    static func addRoutes(to router: Router<WebRequestContext>, access: WebAccess) {
        let page = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: script)) { _, _ in page }
        router.post(RouterPath(stringLiteral: loginPath)) { request, context in try await logIn(request, context: context, access: access) }
        router.get("/api/session") { _, _ in WebApp.json(Data("{}".utf8)) }
        router.post("/api/link") { request, context in
            let body = try await WebApp.decode(LinkBody.self, from: request, context: context)
            guard body.path.hasPrefix("/"), !body.path.contains("?"), !body.path.contains("#"), body.path.utf8.count <= 256 else {
                return WebApp.plain(.badRequest, "give the path to open, such as /api/history/1.rx (no query)")
            }
            return WebApp.json(HistoryEntry.json(["url": access.makeLink(to: body.path)]))
        }
    }

    struct LoginBody: Decodable { var token: String }
    struct LinkBody: Decodable { var path: String }

    /// JSON only: a page of another origin can send a form or text/plain without asking, but not
    /// this (the browser asks first, and no CORS header ever says yes), so it cannot guess on
    /// the wearer's behalf, and a guess costs only the guesser (PeerIdentity).
    static func logIn(_ request: Request, context: WebRequestContext, access: WebAccess) async throws -> Response {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            return WebApp.plain(.unsupportedMediaType, #"send the token as JSON, {"token":"..."}, with Content-Type: application/json"#)
        }
        let body = try await WebApp.decode(LoginBody.self, from: request, context: context)
        let guesser = PeerIdentity.of(remote: context.remoteAddress, local: context.localAddress)
        let code = access.oneTime ? "pairing code" : "token"
        switch access.logIn(with: body.token, from: guesser) {
        case .session(let secret):
            return WebApp.json(HistoryEntry.json(["session": secret]))
        case .wrongToken:
            return WebApp.plain(.unauthorized, "wrong \(code): \(WebSecurity.howToOpen)")
        case .wait(let seconds):
            var response = WebApp.plain(
                .tooManyRequests,
                "too many wrong \(code)s from \(guesser): wait \(seconds) s before the next try; \(WebSecurity.howToOpen)")
            response.headers[.retryAfter] = String(seconds)
            return response
        }
    }

    static let javaScript = #"""
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
          const kept = () => { try { return localStorage.getItem(key) || memory; } catch (error) { return memory; } };
          const keep = (secret) => {
            memory = secret;
            try { if (secret) localStorage.setItem(key, secret); else localStorage.removeItem(key); } catch (error) { /* memory only */ }
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
              if (check && check.ok) return secret;
            }
            try {
              const response = await fetch("/api/login", {
                method: "POST", cache: "no-store", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }),
              });
              if (!response.ok) { problem = (await response.text()).trim(); keep(null); return null; }
              const fresh = (await response.json()).session;
              keep(fresh);
              return fresh;
            } catch (error) {
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
            options.headers = Object.assign({}, (init && init.headers) || {}, { [header]: current });
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
            } catch (error) {
              return "The web app does not answer: is `ribbitd web` still running?";
            }
          }

          return { api, openSocket, followLink, problem: () => problem };
        })();

        """#
}
