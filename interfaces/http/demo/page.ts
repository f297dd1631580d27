import { escapeHtml } from "../../../domain/Text.js"

/**
 * The demo page: plain HTML, every script and style from /demo itself (its Content-Security-Policy
 * allows nothing else), the auth prefix handed to the script in a meta element. The "Sign in
 * again" section shows only when adding a passkey is refused for an old sign-in.
 */
export const demoPage = (
  authPrefix: string,
  options: { readonly emailSignIn: boolean; readonly passkeys: boolean }
) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="portcullis-auth-prefix" content="${escapeHtml(authPrefix)}">
  <meta name="portcullis-passkeys" content="${options.passkeys ? "on" : "off"}">
  <title>Portcullis passkey demo</title>
  <link rel="stylesheet" href="/demo/demo.css">
  <script src="/demo/simplewebauthn-browser.js" defer></script>
  <script src="/demo/demo.js" defer></script>
</head>
<body>
<main>
  <h1>Portcullis passkey demo</h1>
  <p id="status" role="status" aria-live="polite"></p>

  <div id="signed-out">
    <section aria-labelledby="register-heading">
      <h2 id="register-heading">Create an account</h2>
      <form id="register-form">
        <label for="register-email">Email</label>
        <input id="register-email" name="email" type="email" autocomplete="username" required>
        <label for="register-password">Password</label>
        <input id="register-password" name="password" type="password" autocomplete="new-password" required>
        <button type="submit">Register</button>
      </form>
    </section>

    <section aria-labelledby="login-heading">
      <h2 id="login-heading">Sign in with a password</h2>
      <form id="login-form">
        <label for="login-email">Email</label>
        <input id="login-email" name="email" type="email" autocomplete="username" required>
        <label for="login-password">Password</label>
        <input id="login-password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in</button>
      </form>
    </section>

    <section aria-labelledby="email-heading"${options.emailSignIn ? "" : " hidden"}>
      <h2 id="email-heading">Sign in by email</h2>
      <p>No password: a mail brings a link and a code. A new address gets an account when the deployment allows sign-up by mail.</p>
      <form id="email-request-form">
        <label for="email-address">Email</label>
        <input id="email-address" name="email" type="email" autocomplete="username" required>
        <button type="submit">Mail me a link and a code</button>
      </form>
      <form id="email-code-form">
        <label for="email-code">Code from the mail</label>
        <input id="email-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
        <button type="submit">Sign in with the code</button>
      </form>
    </section>

    <section aria-labelledby="passkey-heading"${options.passkeys ? "" : " hidden"}>
      <h2 id="passkey-heading">Sign in with a passkey</h2>
      <form id="passkey-form">
        <label for="passkey-email">Email (optional: leave it empty to pick a passkey)</label>
        <input id="passkey-email" name="email" type="email" autocomplete="username webauthn">
        <button type="submit">Sign in with a passkey</button>
      </form>
    </section>

    <section id="oauth" aria-labelledby="oauth-heading" hidden>
      <h2 id="oauth-heading">Sign in with a provider</h2>
      <p>Configured by SERVICE_OAUTH_…; <code>npm run dev-provider</code> starts one to try.</p>
      <div id="oauth-buttons"></div>
    </section>
  </div>

  <div id="signed-in" hidden>
    <section aria-labelledby="account-heading">
      <h2 id="account-heading">Signed in as <span id="who"></span></h2>
      <button id="sign-out" type="button">Sign out</button>
    </section>

    <section id="reauth" aria-labelledby="reauth-heading" hidden>
      <h2 id="reauth-heading">Sign in again</h2>
      <p>Adding a way to sign in needs a recent sign-in. Confirm it is you, then add the passkey.</p>
      <form id="reauth-form">
        <label for="reauth-email">Email</label>
        <input id="reauth-email" name="email" type="email" autocomplete="username" readonly>
        <label for="reauth-password">Password</label>
        <input id="reauth-password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in again</button>
      </form>
    </section>

    <section aria-labelledby="add-heading"${options.passkeys ? "" : " hidden"}>
      <h2 id="add-heading">Add a passkey</h2>
      <form id="add-passkey-form">
        <label for="device-name">Name it</label>
        <input id="device-name" name="device_name" value="This device" maxlength="100" required>
        <button type="submit">Add a passkey</button>
      </form>
    </section>

    <section aria-labelledby="passkeys-heading"${options.passkeys ? "" : " hidden"}>
      <h2 id="passkeys-heading">Your passkeys</h2>
      <ul id="passkeys"></ul>
    </section>

    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Your sessions</h2>
      <ul id="sessions"></ul>
    </section>
  </div>
</main>
</body>
</html>
`

// overflow-wrap: a long address in "Signed in as …" breaks rather than widening a phone's page.
export const demoStyles = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #f6f6f4; }
main { max-width: 40rem; margin: 0 auto; padding: 1rem; overflow-wrap: anywhere; }
section { background: #fff; border: 1px solid #ccc; border-radius: 6px; padding: 0 1rem 1rem; margin: 1rem 0; }
label { display: block; margin-top: 0.5rem; }
input { font: inherit; width: 100%; box-sizing: border-box; padding: 0.4rem; }
input[readonly] { background: #eee; }
button { font: inherit; margin-top: 0.75rem; padding: 0.4rem 0.9rem; cursor: pointer; }
button:focus-visible, input:focus-visible { outline: 3px solid #005fcc; outline-offset: 2px; }
#status:not(:empty) { padding: 0.5rem 1rem; border-radius: 6px; background: #e7f0fb; }
#status[data-kind="error"] { background: #fbe7e7; }
li { margin: 0.25rem 0; }
li button { margin: 0 0 0 0.5rem; padding: 0.1rem 0.5rem; }
`
