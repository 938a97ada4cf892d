/// The rules every screen shares: large type, high contrast (light and dark), big targets, a
/// focus ring that shows on any background.
enum StyleSheet {
    static let shared = #"""
        :root { color-scheme: light; --ink: #000; --paper: #fff; --accent: #0040c0; --muted: #333; --line: #000; --warn: #8a0000; }
        * { box-sizing: border-box; }
        html { font-size: 125%; }
        /* The text-size setting: 100 % is the large default, up to twice it. */
        html[data-text-size="120"] { font-size: 150%; }
        html[data-text-size="140"] { font-size: 175%; }
        html[data-text-size="170"] { font-size: 212.5%; }
        html[data-text-size="200"] { font-size: 250%; }
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
        .ear-limit { display: inline-block; }
        .limit { margin: 0 0 0.2rem; }
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
        /* A row of actions (links look like buttons); the one to take is blue, the one that loses something red. */
        .actions { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-top: 0.7rem; }
        .actions a { display: inline-flex; align-items: center; min-height: 3rem; padding: 0.4rem 1rem; border: 3px solid var(--line);
          border-radius: 0.5rem; color: var(--ink); font-weight: 700; text-decoration: none; }
        button.use { background: var(--accent); border-color: var(--accent); color: #fff; }
        button.danger { border-color: var(--warn); color: var(--warn); }
        .trial { margin-top: 0.8rem; padding-top: 0.6rem; border-top: 3px solid var(--line); }
        .trial .state { margin-bottom: 0.2rem; }
        .text-size { display: flex; align-items: center; gap: 0.3rem; }
        .text-size button { min-height: 2.6rem; padding: 0.1rem 0.6rem; }
        .text-size output { min-width: 3.6rem; text-align: center; font-weight: 600; white-space: nowrap; }
        nav { display: flex; flex-wrap: wrap; gap: 0.4rem; margin-right: auto; }
        nav a { display: inline-flex; align-items: center; min-height: 2.6rem; padding: 0.2rem 0.7rem; border: 3px solid transparent;
          border-radius: 0.5rem; color: var(--ink); font-weight: 700; text-decoration: underline; }
        nav a[aria-current="page"] { border-color: var(--line); text-decoration: none; }
        @media (max-width: 30rem) { nav { gap: 0.1rem; } nav a { padding: 0.2rem 0.4rem; } }

        """#

    /// Dark mode's colours: last, so it overrides every screen's rules.
    static let dark = #"""
        @media (prefers-color-scheme: dark) {
          :root { color-scheme: dark; --ink: #fff; --paper: #000; --accent: #7fb0ff; --muted: #ddd; --line: #fff; --warn: #ff8080; }
          button.primary, button.use, .badge, button.danger.confirm { color: #000; }
        }


        """#
}
