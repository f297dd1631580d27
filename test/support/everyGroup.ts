import { generateKeyPairSync } from "node:crypto"

/**
 * Settings that serve every route group (mail sign-in, passkeys, an OAuth provider, the OpenID
 * Provider, and an asymmetric algorithm for the JWKS group): for the suites that compare the whole API with a
 * document (the OpenAPI document's own checks, the README's route table).
 */
export const everyGroupEnv = () => ({
  SERVICE_PUBLIC_URL: "https://auth.example.com",
  SERVICE_EMAIL_SIGN_IN_ENABLED: "true",
  SERVICE_PASSKEY_ENABLED: "true",
  SERVICE_PASSKEY_RP_ID: "example.com",
  SERVICE_PASSKEY_RP_NAME: "Example",
  SERVICE_PASSKEY_ORIGINS: "https://auth.example.com",
  SERVICE_OAUTH_GITHUB_CLIENT_ID: "id",
  SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "secret",
  SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "https://app.example.com/callback",
  SERVICE_OIDC_PROVIDER_ENABLED: "true",
  SERVICE_OIDC_PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
    .privateKey.export({ format: "pem", type: "pkcs8" })
    .toString(),
  SERVICE_JWT_ALGORITHM: "EdDSA",
  SERVICE_JWT_PRIVATE_KEY: generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()
})
