/**
 * The demo page's script, served as /demo/demo.js (no inline script: the page's policy allows
 * only its own files). Plain browser JavaScript over the API and @simplewebauthn/browser. The
 * access token stays in this page's memory only; a reload signs the page out. Adding a passkey
 * with an old sign-in is answered ReauthenticationRequiredError: the page asks for the password
 * again, swaps its session for the new one and lets the user retry.
 */
export const demoScript = `"use strict";
(function () {
  var prefix = document.querySelector('meta[name="portcullis-auth-prefix"]').content;
  var webauthn = window.SimpleWebAuthnBrowser;
  var passkeysOn = document.querySelector('meta[name="portcullis-passkeys"]').content === "on";
  var accessToken = null;
  var signedInEmail = null;

  function byId(id) { return document.getElementById(id); }

  function say(text, isError) {
    var status = byId("status");
    status.textContent = text;
    status.dataset.kind = isError ? "error" : "info";
  }

  async function api(method, path, body, authenticated) {
    var headers = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (authenticated && accessToken) headers.authorization = "Bearer " + accessToken;
    var init = { method: method, headers: headers, credentials: "same-origin" };
    if (body !== undefined) init.body = JSON.stringify(body);
    var response = await fetch(prefix + path, init);
    var text = await response.text();
    var data = text ? JSON.parse(text) : null;
    if (!response.ok) {
      var error = new Error((data && data.detail) || "The service answered " + response.status + ".");
      // The problem's code tells a step-up apart from any other refusal.
      error.code = data && data.code;
      error.status = response.status;
      error.problem = data;
      throw error;
    }
    return data;
  }

  function duration(seconds) {
    if (seconds % 60 === 0) return seconds === 60 ? "minute" : seconds / 60 + " minutes";
    return seconds === 1 ? "second" : seconds + " seconds";
  }

  // Times as a person reads them: "just now", "5 minutes ago", then a date in the browser's
  // own locale and time zone; the API's ISO instant stays in the title, for the exact value.
  var dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  function when(iso) {
    var date = new Date(iso);
    if (isNaN(date.getTime())) return String(iso);
    var seconds = Math.round((Date.now() - date.getTime()) / 1000);
    if (seconds < 60 && seconds > -60) return "just now";
    if (seconds > 0 && seconds < 3600) return Math.floor(seconds / 60) === 1 ? "a minute ago" : Math.floor(seconds / 60) + " minutes ago";
    return dateFormat.format(date);
  }

  // A user agent as a person names it ("Chrome on Linux"), not the header's thirty words.
  function client(agent) {
    if (!agent) return "An unknown client";
    function has(word) { return agent.indexOf(word) >= 0; }
    var browser = has("Edg/") ? "Edge" : has("Firefox/") ? "Firefox" : has("Chrome/") ? "Chrome"
      : has("Safari/") ? "Safari" : agent.split(" ")[0];
    var system = /Android/.test(agent) ? "Android" : /iPhone|iPad/.test(agent) ? "iOS" : /Windows/.test(agent) ? "Windows"
      : /Mac OS X/.test(agent) ? "macOS" : /Linux/.test(agent) ? "Linux" : "";
    return system ? browser + " on " + system : browser;
  }

  function askToSignInAgain(problem) {
    var within = typeof problem.max_age === "number" ? " within the last " + duration(problem.max_age) : "";
    byId("reauth-email").value = signedInEmail;
    byId("reauth").hidden = false;
    say("Adding a passkey needs a sign-in" + within + ", and yours is older. Sign in again, then add the passkey.", true);
    byId("reauth-password").focus();
  }

  function withoutKey(options) {
    var copy = Object.assign({}, options);
    delete copy.challenge_key;
    return copy;
  }

  function item(text, button, title) {
    var li = document.createElement("li");
    li.textContent = text;
    if (title) li.title = title;
    if (button) li.appendChild(button);
    return li;
  }

  function revokeButton(session) {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = "Revoke";
    button.setAttribute("aria-label", "Revoke the session of " + client(session.user_agent) + ", " + (session.ip_address || "unknown address"));
    button.addEventListener("click", function () {
      run(async function () {
        await api("DELETE", "/sessions/" + encodeURIComponent(session.family_id), undefined, true);
        if (session.current) return signedOut("This session was revoked; you are signed out.");
        say("Session revoked.");
        await refreshLists();
      });
    });
    return button;
  }

  async function refreshLists() {
    var sessions = await api("GET", "/sessions", undefined, true);
    var passkeys = passkeysOn ? await api("GET", "/passkeys", undefined, true) : [];
    byId("sessions").replaceChildren.apply(byId("sessions"), sessions.map(function (session) {
      var label = client(session.user_agent) + " from " + (session.ip_address || "an unknown address") +
        ", signed in " + when(session.created_at) + (session.current ? " (this session)" : "");
      return item(label, revokeButton(session), (session.user_agent || "") + " since " + session.created_at);
    }));
    byId("passkeys").replaceChildren.apply(byId("passkeys"), passkeys.length === 0
      ? [item("No passkey yet.")]
      : passkeys.map(function (passkey) {
          return item(passkey.device_name + ", added " + when(passkey.created_at) +
            (passkey.last_used_at ? ", last used " + when(passkey.last_used_at) : ", never used"), undefined,
            "added " + passkey.created_at + (passkey.last_used_at ? ", last used " + passkey.last_used_at : ""));
        }));
  }

  async function signedIn(login, how) {
    accessToken = login.access_token;
    signedInEmail = login.user.email;
    byId("who").textContent = login.user.email;
    byId("reauth").hidden = true;
    byId("signed-out").hidden = true;
    byId("signed-in").hidden = false;
    document.body.dataset.state = "signed-in";
    say("Signed in with " + how + ".");
    await refreshLists();
  }

  function signedOut(message) {
    accessToken = null;
    signedInEmail = null;
    byId("reauth").hidden = true;
    byId("signed-in").hidden = true;
    byId("signed-out").hidden = false;
    document.body.dataset.state = "signed-out";
    say(message);
  }

  async function run(action) {
    try {
      await action();
    } catch (error) {
      say(error && error.message ? error.message : String(error), true);
    }
  }

  function onSubmit(id, action) {
    byId(id).addEventListener("submit", function (event) {
      event.preventDefault();
      run(action);
    });
  }

  onSubmit("register-form", async function () {
    await api("POST", "/register", { email: byId("register-email").value, password: byId("register-password").value });
    byId("login-email").value = byId("register-email").value;
    say("Registered. Now sign in with your password.");
  });

  onSubmit("login-form", async function () {
    var login = await api("POST", "/login", { email: byId("login-email").value, password: byId("login-password").value });
    byId("login-password").value = "";
    await signedIn(login, "a password");
  });

  onSubmit("email-request-form", async function () {
    await api("POST", "/email-sign-in/request", { email: byId("email-address").value });
    say("If the address can sign in, a mail with a link and a code is on its way. Type the code below.");
    byId("email-code").focus();
  });

  onSubmit("email-code-form", async function () {
    var login = await api("POST", "/email-sign-in/confirm", {
      email: byId("email-address").value,
      code: byId("email-code").value.trim()
    });
    byId("email-code").value = "";
    await signedIn(login, "a mailed code");
  });

  onSubmit("add-passkey-form", async function () {
    try {
      var options = await api("POST", "/passkeys/register/begin", undefined, true);
      var credential = await webauthn.startRegistration({ optionsJSON: withoutKey(options) });
      await api("POST", "/passkeys/register/complete", {
        challenge_key: options.challenge_key,
        credential: credential,
        device_name: byId("device-name").value
      }, true);
    } catch (error) {
      // Begin or complete: the sign-in may grow too old during the ceremony itself.
      if (error && error.code === "ReauthenticationRequiredError") return askToSignInAgain(error.problem);
      throw error;
    }
    say("Passkey added.");
    await refreshLists();
  });

  onSubmit("reauth-form", async function () {
    var login = await api("POST", "/login", { email: signedInEmail, password: byId("reauth-password").value });
    byId("reauth-password").value = "";
    // The new session replaces the old one, which this page would otherwise leave open; if
    // ending it fails, it simply runs out.
    await api("POST", "/logout", undefined, true).catch(function () {});
    accessToken = login.access_token;
    byId("reauth").hidden = true;
    say("Signed in again. Now add the passkey.");
    await refreshLists();
    byId("device-name").focus();
  });

  onSubmit("passkey-form", async function () {
    var email = byId("passkey-email").value.trim();
    var options = await api("POST", "/passkeys/authenticate/begin", email ? { email: email } : undefined);
    var credential = await webauthn.startAuthentication({ optionsJSON: withoutKey(options) });
    var login = await api("POST", "/passkeys/authenticate/complete", {
      challenge_key: options.challenge_key,
      credential: credential
    });
    await signedIn(login, "a passkey");
  });

  byId("sign-out").addEventListener("click", function () {
    run(async function () {
      await api("POST", "/logout", undefined, true);
      signedOut("Signed out.");
    });
  });

  // OAuth: the provider sends the browser back to this page with code and state; the binding
  // waits in this tab's session storage (never in a URL) for the callback.
  var pendingKey = "portcullis-demo-oauth";

  function providerButton(name) {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = "Sign in with " + name;
    button.addEventListener("click", function () {
      run(async function () {
        var back = location.origin + location.pathname;
        var start = await api("GET", "/oauth/" + encodeURIComponent(name) + "/authorize?redirect_uri=" + encodeURIComponent(back));
        sessionStorage.setItem(pendingKey, JSON.stringify({ provider: name, binding: start.binding }));
        location.assign(start.authorization_url);
      });
    });
    return button;
  }

  async function showProviders() {
    var listed;
    try {
      listed = await api("GET", "/oauth/providers");
    } catch (error) {
      // Without a provider configured the OAuth routes do not exist: nothing to show, nothing wrong.
      if (error.status === 404) return;
      throw error;
    }
    if (listed.providers.length === 0) return;
    byId("oauth-buttons").replaceChildren.apply(byId("oauth-buttons"), listed.providers.map(providerButton));
    byId("oauth").hidden = false;
  }

  async function finishProviderSignIn() {
    var params = new URLSearchParams(location.search);
    var pending = sessionStorage.getItem(pendingKey);
    if (!params.has("state") || pending === null) return false;
    sessionStorage.removeItem(pendingKey);
    history.replaceState(null, "", location.pathname);
    var flow = JSON.parse(pending);
    if (params.has("error")) throw new Error("The provider refused: " + (params.get("error_description") || params.get("error")));
    var login = await api("POST", "/oauth/" + encodeURIComponent(flow.provider) + "/callback", {
      code: params.get("code") || "",
      state: params.get("state"),
      binding: flow.binding
    });
    await signedIn(login, flow.provider);
    return true;
  }

  if (passkeysOn && (!webauthn || !webauthn.browserSupportsWebAuthn())) say("This browser does not support passkeys.", true);
  document.body.dataset.state = "signed-out";
  run(async function () {
    await showProviders();
    await finishProviderSignIn();
  });
})();
`
