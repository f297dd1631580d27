/**
 * The hosted pages' script, served as /hosted/pages.js (the pages' policy allows no inline
 * script). It takes the token from the address, then removes it from the address bar and the
 * history, so that it is neither shown nor kept once read. The page is plain DOM: no markup is
 * ever built from text (the policy requires Trusted Types for that, and nothing here needs it).
 */
export const pageScript = `"use strict";
(function () {
  var page = document.body.dataset.page;
  var endpoint = document.querySelector('meta[name="portcullis-endpoint"]').content;
  var form = document.getElementById("form");
  var result = document.getElementById("result");
  var button = form.querySelector("button");
  var token = new URLSearchParams(window.location.search).get("token");
  if (token !== null) window.history.replaceState(null, "", window.location.pathname);
  // Bearer mode's /sign-in: the app (APP_URL, "" without one) keeps the session, so it confirms the link.
  var handOff = form.dataset.handOff === undefined ? null : form.dataset.handOff;

  // The link handed on to the app in the address's fragment, which no server receives or logs.
  function handOn() {
    var to = new URL(handOff);
    to.hash = "sign_in_token=" + encodeURIComponent(token);
    window.location.assign(to.href);
    return Promise.resolve();
  }

  function show(kind, detail, rules) {
    result.dataset.kind = kind;
    document.getElementById("result-detail").textContent = detail;
    var list = document.getElementById("result-rules");
    list.replaceChildren.apply(list, (rules || []).map(function (rule) {
      var item = document.createElement("li");
      item.textContent = rule;
      return item;
    }));
    result.focus();
  }

  // Done with the link, one way or the other: nothing left to press, a way back to the app.
  function over(kind, detail) {
    form.hidden = true;
    button.disabled = true;
    document.getElementById("back").hidden = false;
    show(kind, detail);
  }

  function finished(detail) {
    over("success", detail);
  }

  var again = " Ask for a new mail if you still need one.";
  var words = {
    missing: "This link is incomplete. Open the link from the mail again, or ask for a new mail.",
    invalid: "This link is not valid: it may have been cut short or changed. Open the link from the mail again, or ask for a new mail.",
    expired: "This link has expired." + again,
    spent: "This link has already been used: each link works once." + again
  };

  // The purpose a page's link carries in its claims (domain/Token.ts); the others' links are random secrets.
  var purposes = { "verify-email": "verify_email", "reset-password": "password_reset" };

  // What can be told of the link without spending it: its shape, its purpose and its expiry,
  // read from the token's own claims (unverified: this only spares a form that could not work;
  // the service checks the signature). Whether it was used already only the service knows.
  function linkProblem() {
    if (!token) return "missing";
    var purpose = purposes[page];
    if (!purpose) return /^[A-Za-z0-9_-]{20,200}$/.test(token) ? null : "invalid";
    var parts = token.split(".");
    if (parts.length !== 3 || !parts.every(function (part) { return /^[A-Za-z0-9_-]+$/.test(part); })) return "invalid";
    var claims;
    try {
      claims = JSON.parse(atob(parts[1].replace(/-/g, "+").replace(/_/g, "/")));
    } catch (error) {
      return "invalid";
    }
    if (!claims || claims.type !== purpose || typeof claims.exp !== "number") return "invalid";
    return claims.exp * 1000 <= Date.now() ? "expired" : null;
  }

  // The service's refusals of the link itself, told in the words of a link rather than a token.
  var refusals = { TokenBlacklistedError: "spent", TokenExpiredError: "expired", TokenError: "invalid" };

  function refused(answer) {
    var problem = refusals[answer.code];
    if (problem === undefined) return false;
    // /sign-in's one refusal covers all three: the service does not say which. An address
    // change's refusals say why the change was called off, which the owner may act on.
    if (page === "sign-in") over("error", "This link is not valid, has expired or has already been used." + again);
    else if (page === "confirm-email" || page === "undo-email-change") over("error", answer.detail);
    else over("error", words[problem]);
    return true;
  }

  // Only the sign-in page keeps what the service answers with: its cookies, in cookie mode.
  async function complete(body, credentials, route) {
    var response;
    try {
      response = await fetch(route || endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        credentials: credentials || "omit",
        referrerPolicy: "no-referrer"
      });
    } catch (error) {
      return { ok: false, detail: "The service could not be reached. Check your connection and try again." };
    }
    var data = null;
    try { data = await response.json(); } catch (error) { data = null; }
    var detail = data && typeof data.detail === "string" ? data.detail : "The service answered " + response.status + ".";
    var rules = data && Array.isArray(data.errors)
      ? data.errors.map(function (e) { return e && typeof e.message === "string" ? e.message : ""; }).filter(Boolean)
      : [];
    var email = data && data.user && typeof data.user.email === "string" ? data.user.email : "";
    return { ok: response.ok, status: response.status, data: data, detail: detail, rules: rules, code: data && data.code, email: email };
  }

  var submit = {
    "verify-email": async function () {
      var answer = await complete({ token: token });
      if (answer.ok) return finished("Your email address is confirmed. You can close this page.");
      if (!refused(answer)) show("error", answer.detail);
    },
    "confirm-email": async function () {
      var answer = await complete({ token: token });
      if (answer.status === 202 && answer.data && typeof answer.data.awaiting === "string") {
        return finished(answer.data.awaiting === "current"
          ? "Confirmed for the new address. The account moves once the link mailed to its current address is used too: open that mail and press its button."
          : "Approved. The account moves once the link mailed to the new address is used too: open that mail and press its button.");
      }
      if (answer.ok) return finished("Your account now uses its new address. Your other sessions have ended.");
      if (!refused(answer)) show("error", answer.detail);
    },
    "undo-email-change": async function () {
      var answer = await complete({ token: token });
      if (answer.ok && answer.data && typeof answer.data.email === "string") {
        over("success", answer.detail);
        return offerReset(answer.data.email);
      }
      if (!refused(answer)) show("error", answer.detail);
    },
    "sign-in": async function () {
      if (handOff !== null) return handOn();
      var answer = await complete({ token: token }, "same-origin");
      if (answer.ok) return finished("You are signed in as " + answer.email + ". You can close this page.");
      if (!refused(answer)) show("error", answer.detail);
    },
    "reset-password": async function () {
      var password = document.getElementById("new-password");
      var repeat = document.getElementById("repeat-password");
      password.removeAttribute("aria-invalid");
      repeat.removeAttribute("aria-invalid");
      if (password.value !== repeat.value) {
        repeat.setAttribute("aria-invalid", "true");
        return show("error", "The two passwords differ. Type the same new password twice.");
      }
      var answer = await complete({ token: token, new_password: password.value });
      if (answer.ok) {
        password.value = "";
        repeat.value = "";
        return finished("Your password has been changed and every session has ended. Sign in with the new password.");
      }
      if (refused(answer)) return;
      if (answer.code === "InvalidPasswordError") password.setAttribute("aria-invalid", "true");
      show("error", answer.detail, answer.rules.filter(function (rule) { return answer.detail.indexOf(rule) < 0; }));
    }
  }[page];

  // After an undo: the restored address has no password; one press asks for a reset link to it.
  function offerReset(email) {
    var reset = document.getElementById("reset");
    var resetButton = reset.querySelector("button");
    document.getElementById("restored").textContent = email;
    reset.hidden = false;
    resetButton.focus();
    reset.addEventListener("submit", async function (event) {
      event.preventDefault();
      resetButton.disabled = true;
      // The reset route beside the undo route, relative to the page as the endpoint is.
      var route = endpoint.slice(0, endpoint.length - "me/email/undo".length) + "password-reset/request";
      var answer = await complete({ email: email }, "omit", route);
      reset.hidden = !answer.ok;
      resetButton.disabled = answer.ok;
      show(answer.ok ? "success" : "error", answer.ok ? "A password reset link is on its way to " + email + "." : answer.detail);
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    delete result.dataset.kind;
    button.disabled = true;
    form.setAttribute("aria-busy", "true");
    submit().finally(function () {
      // A link found spent, expired or invalid stays so: its button stays off.
      if (!form.hidden) button.disabled = false;
      form.removeAttribute("aria-busy");
    });
  });

  var problem = linkProblem();
  if (problem !== null) return over("error", words[problem]);
  if (handOff === "") {
    return over("info", "This link signs you in to the app that sent the mail, which has to open it itself. Go back to the app and type the 6-digit code from the same mail there.");
  }
  form.hidden = false;
  var first = form.querySelector("input, button");
  if (first) first.focus();
})();
`
