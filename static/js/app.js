// Small behaviours shared by every page. Loaded with the page's CSP nonce; no inline script.
