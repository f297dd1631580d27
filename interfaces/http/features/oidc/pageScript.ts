import { scopeWords } from "./pages.js"

/**
 * The provider's pages' script, served as /oauth2/pages.js beside them (their policy allows no
 * inline script). Plain DOM, no markup built from text. The routes it calls are relative to the
 * page: `session`, `email-sign-in` and `consent` beside it, a provider's start and a passkey's
 * one level up. A provider's flow leaves the page and comes back to it: the request and the flow's
 * binding wait in this tab's sessionStorage under the flow's state.
 */
export const providerPageScript = `"use strict";
(function () {
  var page = document.body.dataset.page;
  var loginField = document.body.dataset.loginField;
  var request = new URLSearchParams(window.location.search).get("request") || "";
  var result = document.getElementById("result");
  var scopeWords = ${JSON.stringify(scopeWords)};

  function show(kind, detail) {
    result.dataset.kind = kind;
    document.getElementById("result-detail").textContent = detail;
    result.focus();
  }

  async function send(route, body, headers) {
    var response;
    try {
      response = await fetch(route, {
        method: "POST",
        headers: Object.assign({ "content-type": "application/json" }, headers || {}),
        body: JSON.stringify(body),
        credentials: "same-origin",
        referrerPolicy: "no-referrer"
      });
    } catch (error) {
      return { ok: false, detail: "The service could not be reached. Check your connection and try again." };
    }
    var data = null;
    try { data = await response.json(); } catch (error) { data = null; }
    var detail = data && typeof data.detail === "string" ? data.detail : "The service answered " + response.status + ".";
    return { ok: response.ok, status: response.status, data: data, detail: detail };
  }

  // Where the service says the browser goes next: the consent page, or back to the app.
  function go(answer) {
    if (!answer.ok || !answer.data || typeof answer.data["continue"] !== "string") return false;
    window.location.assign(answer.data["continue"]);
    return true;
  }

  function handle(form, run) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      delete result.dataset.kind;
      var buttons = form.querySelectorAll("button");
      buttons.forEach(function (button) { button.disabled = true; });
      form.setAttribute("aria-busy", "true");
      run(event).finally(function () {
        buttons.forEach(function (button) { button.disabled = false; });
        form.removeAttribute("aria-busy");
      });
    });
  }

  function value(id) { return document.getElementById(id).value; }

  function csrfToken() {
    var found = document.cookie.split("; ").filter(function (pair) { return pair.indexOf("portcullis_op_csrf=") === 0; })[0];
    return found ? found.slice("portcullis_op_csrf=".length) : "";
  }

  var form = document.getElementById("form");
  var socialKey = "portcullis_op_social:";

  // A social provider came back to this page (its redirect URI) with a code or an error and the
  // state: the request and the binding were kept in this tab when the user left for it.
  var returned = new URLSearchParams(window.location.search);
  var providerReturn = page === "oauth2-sign-in" && returned.get("state") && (returned.get("code") || returned.get("error"));
  var kept = null;
  if (providerReturn) {
    try { kept = JSON.parse(window.sessionStorage.getItem(socialKey + returned.get("state")) || "null"); } catch (error) { kept = null; }
    window.sessionStorage.removeItem(socialKey + returned.get("state"));
    if (!kept) return show("error", "This sign-in was started in another tab or has expired. Start again from the app.");
    request = kept.request;
    // The page's address loses the provider's code: a reload or a bookmark would present it again.
    window.history.replaceState(null, "", window.location.pathname + "?request=" + encodeURIComponent(request));
  }
  if (!request) return show("error", "This page needs the app's sign-in request. Start again from the app.");

  // A mailed link asked from this page opens it with the request and the link's token.
  var mailedToken = page === "oauth2-sign-in" ? returned.get("token") : null;
  if (mailedToken) window.history.replaceState(null, "", window.location.pathname + "?request=" + encodeURIComponent(request));

  if (page === "oauth2-sign-in") {
    handle(form, async function () {
      var body = { request: request, password: value("password") };
      body[loginField] = value("identifier");
      var answer = await send("session", body);
      if (!go(answer)) show("error", answer.detail);
    });
    var passkey = document.getElementById("passkey");
    if (passkey && window.SimpleWebAuthnBrowser) {
      handle(passkey, async function () {
        var begin = await send("../passkeys/authenticate/begin", {});
        if (!begin.ok) return show("error", begin.detail);
        var options = Object.assign({}, begin.data);
        var key = options.challenge_key;
        delete options.challenge_key;
        var credential;
        try {
          credential = await window.SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options });
        } catch (error) {
          return show("error", "No passkey was used. Try again, or sign in another way.");
        }
        var answer = await send("session", { request: request, challenge_key: key, credential: credential });
        if (!go(answer)) show("error", answer.detail);
      });
      passkey.hidden = false;
    }
    var codeRequest = document.getElementById("code-request");
    var code = document.getElementById("code");
    if (codeRequest && code) {
      handle(codeRequest, async function () {
        var answer = await send("email-sign-in", { request: request, email: value("code-email") });
        if (!answer.ok) return show("error", answer.detail);
        code.hidden = false;
        show("success", "If the address has an account, a mail is on its way to it: open its link, or type its code below.");
        document.getElementById("code-value").focus();
      });
      handle(code, async function () {
        var answer = await send("session", { request: request, email: value("code-email"), code: value("code-value") });
        if (!go(answer)) show("error", answer.detail);
      });
      codeRequest.hidden = false;
    }
    var providers = document.getElementById("providers");
    if (providers) {
      providers.querySelectorAll("button[data-provider]").forEach(function (button) {
        button.addEventListener("click", async function () {
          delete result.dataset.kind;
          button.disabled = true;
          var name = button.dataset.provider;
          var started = null;
          try {
            var response = await fetch("../oauth/" + encodeURIComponent(name) + "/authorize?redirect_uri=" +
              encodeURIComponent(document.body.dataset.signInUrl), { credentials: "same-origin" });
            started = response.ok ? await response.json() : null;
          } catch (error) {
            started = null;
          }
          button.disabled = false;
          if (!started || typeof started.authorization_url !== "string") {
            return show("error", "That provider cannot be reached now. Try again, or sign in another way.");
          }
          var state = new URL(started.authorization_url).searchParams.get("state") || "";
          window.sessionStorage.setItem(socialKey + state, JSON.stringify({ request: request, provider: name, binding: started.binding }));
          window.location.assign(started.authorization_url);
        });
      });
      providers.hidden = false;
    }
    form.hidden = false;
    document.getElementById("identifier").focus();
    if (mailedToken) {
      show("busy", "Signing you in…");
      send("session", { request: request, token: mailedToken }).then(function (answer) {
        if (!go(answer)) show("error", answer.detail);
      });
    }
    if (providerReturn) {
      if (returned.get("error")) {
        show("error", "The provider did not sign you in. Try again, or sign in another way.");
      } else {
        show("busy", "Signing you in…");
        send("session", {
          request: request,
          provider: kept.provider,
          code: returned.get("code"),
          state: returned.get("state"),
          binding: kept.binding
        }).then(function (answer) { if (!go(answer)) show("error", answer.detail); });
      }
    }
  }

  if (page === "oauth2-consent") {
    fetch("consent?request=" + encodeURIComponent(request), {
      headers: { accept: "application/json" },
      credentials: "same-origin"
    }).then(async function (response) {
      var prompt = null;
      try { prompt = await response.json(); } catch (error) { prompt = null; }
      if (!response.ok || !prompt) {
        return show("error", response.status === 401
          ? "You are not signed in any more. Start again from the app."
          : "This request has expired or was answered already. Start again from the app.");
      }
      document.getElementById("client").textContent = prompt.client_name;
      var list = document.getElementById("scopes");
      list.replaceChildren.apply(list, prompt.scopes.map(function (scope) {
        var item = document.createElement("li");
        item.textContent = scopeWords[scope] || scope;
        return item;
      }));
      if (prompt.self_registered) {
        document.getElementById("redirect-host").textContent = prompt.redirect_host;
        document.getElementById("unverified").hidden = false;
      }
      form.hidden = false;
      form.querySelector("button").focus();
    }, function () {
      show("error", "The service could not be reached. Check your connection and try again.");
    });
    handle(form, async function (event) {
      var approve = event.submitter ? event.submitter.value === "true" : false;
      var answer = await send("consent", { request: request, approve: approve }, { "x-csrf-token": csrfToken() });
      if (!go(answer)) show("error", answer.detail);
    });
  }
})();
`
