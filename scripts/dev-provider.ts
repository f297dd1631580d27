/**
 * A local OpenID provider for trying "Sign in with …" on a laptop (`npm run dev-provider`): the
 * test suite's own provider (oidc-provider, PKCE required, login and consent pages) on 127.0.0.1,
 * one client and one user, and the setting that makes Portcullis use it. For development only:
 * its keys are made at each start and nothing it holds outlives the process.
 *
 * DEV_PROVIDER_PORT (9400) is where it listens; the redirect URI it allows is the demo page of the
 * service at SERVICE_PUBLIC_URL, else http://localhost:SERVICE_PORT (8000).
 */
// oidc-provider prints two notices on import that say nothing to this script's user: that Node 20
// is not its supported runtime (the suite runs it on Node 20, this project's engine) and that its
// memory adapter keeps nothing (which is what a development provider is for). Only those two are
// kept quiet.
const notices = [
  /^oidc-provider WARNING: Unsupported runtime/,
  /^oidc-provider WARNING: a quick start development-only/
]
const warn = console.warn.bind(console)
console.warn = (...args: Array<unknown>) => {
  if (typeof args[0] === "string" && notices.some((notice) => notice.test(args[0] as string))) return
  warn(...args)
}
const { start } = await import("../test/support/OidcProvider.js")

const port = Number(process.env.DEV_PROVIDER_PORT ?? 9400)
const service = process.env.SERVICE_PUBLIC_URL ?? `http://localhost:${process.env.SERVICE_PORT ?? 8000}`
const redirect = new URL("/demo", service).href
const client = { id: "portcullis-dev", secret: "portcullis-dev-secret" }
const user = { login: "dev@example.com", password: "dev-password" }

const provider = await start({
  port,
  clients: [
    {
      client_id: client.id,
      client_secret: client.secret,
      redirect_uris: [redirect],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic"
    }
  ],
  accounts: [
    {
      ...user,
      claims: { sub: "dev-user-1", email: user.login, email_verified: true, name: "Dev User" }
    }
  ]
})

const setting = [
  {
    name: "local",
    authorization_endpoint: provider.discovery.authorization_endpoint,
    token_endpoint: provider.discovery.token_endpoint,
    userinfo_endpoint: provider.discovery.userinfo_endpoint,
    scopes: ["openid", "email", "profile"],
    client_id: client.id,
    client_secret: client.secret,
    redirect_uris: [redirect]
  }
]

process.stdout.write(`A local OpenID provider is at ${provider.issuer} (Ctrl-C stops it).
Its one user: ${user.login}, password ${user.password}.

Start Portcullis beside it with its demo page:

  SERVICE_DEMO=true SERVICE_OAUTH_CUSTOM_PROVIDERS='${JSON.stringify(setting)}' npm start

then open ${redirect} and press "Sign in with local".
`)
