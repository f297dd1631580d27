import { escapeHtml } from "../../../../domain/Text.js"

/**
 * The provider's hosted pages: sign-in and consent for a parked authorization request. They are
 * clients of POST /oauth2/session and the consent routes, as a deployment's own screens would be;
 * their script and styles come from beside them (`pages.js`, `pages.css` under /oauth2), so no
 * inline script or style is needed and the policy refuses framing.
 */
export interface ProviderPageOptions {
  readonly product: string
  /** LOGIN_FIELD: the sign-in form's identifier field. */
  readonly loginField: string
  /** EMAIL_SIGN_IN_ENABLED: the sign-in page offers a mailed code. */
  readonly emailSignIn: boolean
  /** PASSKEY_ENABLED: the sign-in page offers a passkey. */
  readonly passkeys: boolean
  /** The social providers that list the sign-in page's URL among their redirect URIs. */
  readonly providers: ReadonlyArray<string>
  /** The sign-in page's absolute URL: the redirect URI those providers return to. */
  readonly signInUrl: string
  /** LOGO_URL: an image shown above the product's name. */
  readonly logoUrl?: string | undefined
}

/** How the sign-in page names a provider on its button. */
const providerLabels: Readonly<Record<string, string>> = {
  github: "GitHub",
  gitlab: "GitLab",
  google: "Google",
  discord: "Discord"
}
const labelOf = (name: string) => providerLabels[name] ?? name.charAt(0).toUpperCase() + name.slice(1)

/** The logo above the product's name: decorative (the name beside it says whose it is), so its alt is empty. */
const logoOf = (options: ProviderPageOptions) =>
  options.logoUrl === undefined ? "" : `  <img class="logo" src="${escapeHtml(options.logoUrl)}" alt="">\n`

const frame = (page: string, title: string, options: ProviderPageOptions, body: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noindex">
  <title>${escapeHtml(title)} · ${escapeHtml(options.product)}</title>
  <link rel="stylesheet" href="pages.css">
${options.passkeys ? '  <script src="webauthn.js" defer></script>\n' : ""}  <script src="pages.js" defer></script>
</head>
<body data-page="${page}" data-login-field="${escapeHtml(options.loginField)}" data-sign-in-url="${escapeHtml(options.signInUrl)}">
<main>
${logoOf(options)}  <p class="product">${escapeHtml(options.product)}</p>
  <h1>${escapeHtml(title)}</h1>
  <noscript><p>This page needs JavaScript. Turn it on and start again from the app.</p></noscript>
${body}
  <div id="result" role="status" aria-live="polite" tabindex="-1"><p id="result-detail"></p></div>
</main>
</body>
</html>
`

/**
 * /oauth2/sign-in: the password form, and a passkey, a mailed code and the social providers when
 * the deployment has them.
 */
export const providerSignInPage = (options: ProviderPageOptions) => {
  const label = options.loginField === "email" ? "Email address" : options.loginField.replace(/_/g, " ")
  const mailed = options.emailSignIn
    ? `
  <form id="code-request" hidden>
    <h2>Or sign in by mail</h2>
    <label for="code-email">Address to mail a link and a code to</label>
    <input id="code-email" name="email" type="email" autocomplete="email" required>
    <button type="submit">Mail me a link and a code</button>
  </form>
  <form id="code" hidden>
    <label for="code-value">The 6-digit code from the mail</label>
    <input id="code-value" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required>
    <button type="submit">Sign in with the code</button>
  </form>`
    : ""
  const passkey = options.passkeys
    ? `
  <form id="passkey" hidden>
    <h2>Or use a passkey</h2>
    <button type="submit">Sign in with a passkey</button>
  </form>`
    : ""
  const providers =
    options.providers.length === 0
      ? ""
      : `
  <div id="providers" hidden>
    <h2>Or continue with</h2>
${options.providers.map((name) => `    <button type="button" class="provider" data-provider="${escapeHtml(name)}">Continue with ${escapeHtml(labelOf(name))}</button>`).join("\n")}
  </div>`
  return frame(
    "oauth2-sign-in",
    "Sign in",
    options,
    `  <form id="form" hidden>
    <label for="identifier">${escapeHtml(label.charAt(0).toUpperCase() + label.slice(1))}</label>
    <input id="identifier" name="identifier" autocomplete="username" required>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit">Sign in</button>
  </form>${passkey}${mailed}${providers}`
  )
}

/** /oauth2/consent: the app's name, what each scope lets it see, and the two answers. */
export const providerConsentPage = (options: ProviderPageOptions) =>
  frame(
    "oauth2-consent",
    "Allow access?",
    options,
    `  <form id="form" hidden>
    <p><strong id="client"></strong> asks to sign you in and to see:</p>
    <ul id="scopes"></ul>
    <p id="unverified" class="hint" hidden>This app registered itself: ${escapeHtml(options.product)} has not checked who runs it. It would send you back to <strong id="redirect-host"></strong>.</p>
    <button type="submit" name="approve" value="true">Allow</button>
    <button type="submit" name="approve" value="false" class="secondary">Deny</button>
  </form>`
  )

/** What each scope lets the app see, as the consent page says it. */
export const scopeWords: Readonly<Record<string, string>> = {
  openid: "who you are on this service",
  profile: "your profile",
  email: "your email address, and whether it is confirmed",
  offline_access: "your account while you are away (it stays signed in)",
  permissions: "your roles and permissions"
}

export const providerPageStyles = `h2 { font-size: 1.1rem; margin: 1.5rem 0 0; }
button.secondary { background: #fff; color: #005fcc; border: 1px solid #005fcc; margin-left: 0.5rem; }
button.provider { display: block; margin-top: 0.5rem; }
.logo { display: block; max-width: 100%; max-height: 3rem; margin-bottom: 0.5rem; }
`
