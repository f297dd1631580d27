import { Either, Option, Redacted } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"
import { type AlgorithmKey, keyKinds, readPrivateKey } from "../signingKeys.js"
import { keyText, type readTokens } from "./tokens.js"

const rsaForm = `a PEM or JWK private key, ${keyKinds.RS256}`

/**
 * Portcullis as an OpenID Provider (off by default): its issuer, the RSA key its ID tokens and
 * access tokens are signed with (RS256, the one algorithm every client takes), and how long its
 * codes live. With JWT_ALGORITHM=RS256 the access tokens' key signs, so one key is published.
 */
export const readOidc = (
  read: SettingsReader,
  server: { readonly publicUrl: URL },
  tokens: Pick<ReturnType<typeof readTokens>, "jwtAlgorithm" | "jwtPrivateKey" | "jwtIssuer">
) => {
  const enabled = read.setting("OIDC_PROVIDER_ENABLED", F.bool, false, {
    doc: "Serve the OpenID Provider: discovery, `/oauth2/authorize`, token, userinfo, revocation, introspection, end-session and the sign-in and consent pages, for the clients `portcullis client add` registers."
  })
  const issuer = read.setting("OIDC_ISSUER", F.url("http:", "https:"), server.publicUrl, {
    doc: "The provider's issuer (`iss`), an https URL in production; PUBLIC_URL by default. Must differ from JWT_ISSUER, so that neither kind of token is taken for the other."
  })
  const issuerText = issuer.href.replace(/\/+$/, "")
  // OIDC Discovery §3 and RFC 8414 §2: an issuer has no query and no fragment.
  if (issuer.search !== "" || issuer.hash !== "") {
    read.problem(`${PREFIX}OIDC_ISSUER has a query or a fragment; expected an http(s) URL without either`)
  }
  const privateText = keyText(
    read,
    "OIDC_PRIVATE_KEY",
    rsaForm,
    "The RSA key (2048 bits or more) that signs the provider's ID and access tokens (RS256), published in the JWKS; not needed with JWT_ALGORITHM=RS256, whose key signs them. `portcullis keygen --algorithm RS256` prints one."
  )
  const codeTtlSeconds = read.setting("OIDC_CODE_TTL_SECONDS", F.int(10, 600), 60, {
    doc: "How long an authorization code can be redeemed."
  })
  const dynamicRegistration = read.setting("OIDC_DYNAMIC_REGISTRATION", F.bool, false, {
    doc: "Serve `POST /oauth2/register` (RFC 7591): apps and agents register themselves as public clients (no secret, PKCE), with https or loopback redirect URIs; their consent page says they are unverified. Bucket `oidc_register`."
  })
  const clientMetadataDocuments = read.setting("OIDC_CLIENT_METADATA_DOCUMENTS", F.bool, false, {
    doc: "Take a client_id that is an https URL as a Client ID Metadata Document: fetched (no private address, 5 s, 5 KiB), registered as a public, self-registered client, kept 5 minutes to 24 hours; discovery says so."
  })
  const clientMetadataAllowPrivate = read.setting("OIDC_CLIENT_METADATA_ALLOW_PRIVATE", F.bool, false, {
    doc: "Also fetch metadata documents from http:// URLs and loopback or private addresses: for development and tests only."
  })
  const dynamicClientIdleDays = read.setting("OIDC_DYNAMIC_CLIENT_IDLE_DAYS", F.int(1, 3650), 30, {
    doc: "A self-registered client unused this many days (no grant used since) is removed by the sweep."
  })
  let signingKey = Option.none<Redacted.Redacted<AlgorithmKey>>()
  if (typeof privateText !== "string") {
    signingKey = Either.match(readPrivateKey(privateText.text, "RS256"), {
      onLeft: (fault) => {
        read.problem(`${privateText.source} ${fault}; expected ${rsaForm}`)
        return Option.none()
      },
      onRight: (key) => Option.some(Redacted.make(key))
    })
  } else if (tokens.jwtAlgorithm === "RS256") {
    signingKey = tokens.jwtPrivateKey
  }
  if (enabled) {
    if (privateText === "unset" && tokens.jwtAlgorithm !== "RS256") {
      read.problem(
        `${PREFIX}OIDC_PROVIDER_ENABLED needs ${PREFIX}OIDC_PRIVATE_KEY or ${PREFIX}OIDC_PRIVATE_KEY_FILE (or ${PREFIX}JWT_ALGORITHM=RS256); expected ${rsaForm} (\`portcullis keygen --algorithm RS256\` prints one)`
      )
    }
    if (issuerText === tokens.jwtIssuer) {
      read.problem(
        `${PREFIX}OIDC_ISSUER equals ${PREFIX}JWT_ISSUER (${issuerText}); expected another issuer, so that the provider's tokens and Portcullis's own are never taken for each other`
      )
    }
  }
  return {
    providerEnabled: enabled,
    /** Without a trailing slash, as every response and discovery name it. */
    issuer: issuerText,
    /** The provider's RSA key: OIDC_PRIVATE_KEY, else JWT_PRIVATE_KEY under RS256. */
    signingKey,
    codeTtlSeconds,
    dynamicRegistration,
    dynamicClientIdleDays,
    clientMetadataDocuments,
    clientMetadataAllowPrivate
  }
}

export type OidcSettings = ReturnType<typeof readOidc>
