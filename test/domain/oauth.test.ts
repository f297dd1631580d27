import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, Option, Schema } from "effect"
import {
  checkState,
  constantTimeEqual,
  decideLink,
  decideSignIn,
  LinkedAccount,
  LinkedAccountId,
  type OAuthStateClaims,
  OAuthUserInfo,
  providerEmail,
  type SignInFacts,
  type StateExpectation,
  stateClaimsOf
} from "../../domain/OAuth.js"
import type { TokenPayload } from "../../domain/Token.js"
import { Email, User, UserId } from "../../domain/User.js"

const ALICE = UserId.make("0190f0c2-0000-7000-8000-00000000000a")
const BOB = UserId.make("0190f0c2-0000-7000-8000-00000000000b")

const user = (id: UserId, email: string, overrides: Partial<User> = {}) =>
  new User({
    id,
    email: Email.make(email),
    is_active: true,
    is_verified: true,
    is_superuser: false,
    created_at: DateTime.unsafeMake(0),
    roles: [],
    hashed_password: Option.some("$argon2id$hash"),
    ...overrides
  })

const account = (owner: UserId, provider: string, providerUserId: string) =>
  new LinkedAccount({
    id: LinkedAccountId.make(`${provider}-${providerUserId}`),
    provider,
    provider_user_id: providerUserId,
    user_id: owner,
    provider_email: Option.none(),
    access_token: Option.none(),
    refresh_token: Option.none(),
    expires_at: Option.none(),
    created_at: DateTime.unsafeMake(0)
  })

const info = (overrides: Partial<OAuthUserInfo> = {}): OAuthUserInfo =>
  Schema.decodeSync(OAuthUserInfo)({
    provider: "github",
    provider_user_id: "42",
    email: "alice@example.com",
    email_verified: true,
    name: "Alice",
    picture: null,
    raw: {},
    ...overrides
  })

describe("OAuthUserInfo", () => {
  it("takes an email as unverified unless the provider says otherwise", () => {
    const decoded = Schema.decodeUnknownSync(OAuthUserInfo)({
      provider: "github",
      provider_user_id: "42",
      email: "a@example.com",
      name: null,
      picture: null,
      raw: { login: "a" }
    })
    expect(decoded.email_verified).toBe(false)
  })

  it("refuses an empty provider user id, which would make every such account one", () => {
    const decoded = Schema.decodeUnknownEither(OAuthUserInfo)({ ...info(), provider_user_id: "" })
    expect(Either.isLeft(decoded)).toBe(true)
  })
})

describe("providerEmail", () => {
  it.each([
    ["alice@example.com", Option.some("alice@example.com")],
    ["  Alice@Example.COM ", Option.some("alice@example.com")],
    ["not-an-email", Option.none()],
    ["alice@localhost", Option.none()],
    [null, Option.none()]
  ])("%j → %j", (email, expected) => {
    expect(providerEmail(info({ email }))).toEqual(expected)
  })
})

describe("decideSignIn (spec rule 3 with the takeover guard)", () => {
  const alice = user(ALICE, "alice@example.com")
  const holder = (who: User, linkedProviders: ReadonlyArray<string> = []) => Option.some({ user: who, linkedProviders })
  const facts = (overrides: Partial<SignInFacts>): SignInFacts => ({
    linked: Option.none(),
    emailHolder: Option.none(),
    info: info(),
    autoLinkByEmail: true,
    ...overrides
  })
  const linked = { account: account(ALICE, "github", "42"), user: alice }

  const cases: ReadonlyArray<readonly [string, SignInFacts, unknown]> = [
    [
      "a linked provider account signs its user in, whatever the email says",
      facts({
        linked: Option.some(linked),
        emailHolder: holder(user(BOB, "bob@example.com")),
        info: info({ email: "bob@example.com", email_verified: false }),
        autoLinkByEmail: false
      }),
      { _tag: "SignInLinked", ...linked }
    ],
    ["no email at all is refused", facts({ info: info({ email: null }) }), { _tag: "Refuse", reason: "email_missing" }],
    [
      "an email that is not an address matches nobody and is refused",
      facts({ info: info({ email: "alice" }) }),
      { _tag: "Refuse", reason: "email_missing" }
    ],
    [
      "an unverified email of an existing user is refused",
      facts({ info: info({ email_verified: false }), emailHolder: holder(alice) }),
      { _tag: "Refuse", reason: "email_unverified" }
    ],
    [
      "an unverified email of nobody is refused too: no verified account for an unproven address",
      facts({ info: info({ email_verified: false }) }),
      { _tag: "Refuse", reason: "email_unverified" }
    ],
    [
      "a verified email of nobody creates a user, with the email normalised",
      facts({ info: info({ email: " New.User@Example.COM" }) }),
      { _tag: "Create", email: "new.user@example.com" }
    ],
    [
      "a verified email of a verified user links to it",
      facts({ info: info({ email: "ALICE@example.com " }), emailHolder: holder(alice, ["google"]) }),
      { _tag: "AutoLink", user: alice, takeover: false }
    ],
    [
      "a verified email of a user who never verified it links with the takeover guard",
      facts({ emailHolder: holder(user(ALICE, "alice@example.com", { is_verified: false })) }),
      { _tag: "AutoLink", user: user(ALICE, "alice@example.com", { is_verified: false }), takeover: true }
    ],
    [
      "with auto-link off, a taken email is refused",
      facts({ emailHolder: holder(alice), autoLinkByEmail: false }),
      { _tag: "Refuse", reason: "email_taken" }
    ],
    [
      "a user who linked another account of this provider is refused a second one",
      facts({ emailHolder: holder(alice, ["google", "github"]) }),
      { _tag: "Refuse", reason: "provider_already_linked" }
    ],
    [
      "a holder whose email is not the provider's is no holder",
      facts({ emailHolder: holder(user(BOB, "bob@example.com")) }),
      { _tag: "Create", email: "alice@example.com" }
    ]
  ]

  it.each(cases)("%s", (_, given, expected) => {
    expect(decideSignIn(given)).toEqual(expected)
  })
})

describe("decideLink (spec rules 4 and 5)", () => {
  const mine = account(ALICE, "github", "42")
  const theirs = account(BOB, "github", "42")
  const myOther = account(ALICE, "github", "7")

  it.each([
    ["the caller's own account again: relink", Option.some(mine), Option.some(mine), { _tag: "Relink", account: mine }],
    ["another user's account", Option.some(theirs), Option.none(), { _tag: "AccountLinkedToOther" }],
    [
      "another user's account, the caller having one of this provider",
      Option.some(theirs),
      Option.some(myOther),
      { _tag: "AccountLinkedToOther" }
    ],
    [
      "a free account, the caller having another one",
      Option.none(),
      Option.some(myOther),
      { _tag: "ProviderAlreadyLinked" }
    ],
    ["a free account, none of this provider yet", Option.none(), Option.none(), { _tag: "Link" }]
  ] as const)("%s", (_, identity, callersAccount, expected) => {
    expect(decideLink({ caller: ALICE, identity, callersAccount })).toEqual(expected)
  })
})

describe("constantTimeEqual", () => {
  const digest = `${"a".repeat(63)}b`
  it.each([
    [digest, digest, true],
    [digest, `c${digest.slice(1)}`, false],
    [digest, `${digest.slice(0, -1)}c`, false],
    [digest, digest.slice(0, -1), false],
    [digest, `${digest}b`, false],
    [digest, "", false],
    ["", "", true],
    ["", "a", false]
  ])("%j vs %j → %s", (known, candidate, expected) => {
    expect(constantTimeEqual(known, candidate)).toBe(expected)
  })
})

describe("checkState", () => {
  const digest = "0".repeat(64)
  const otherDigest = `${"0".repeat(63)}1`
  const signIn: OAuthStateClaims = {
    purpose: "oauth_state",
    binding_digest: digest,
    nonce: "n",
    provider: "github",
    redirect_uri: "https://app.example/cb"
  }
  const link: OAuthStateClaims = { ...signIn, purpose: "oauth_link_state", link_user_id: ALICE }
  const expectSignIn: StateExpectation = { purpose: "oauth_state", provider: "github", bindingDigest: digest }
  const expectLink: StateExpectation = { ...expectSignIn, purpose: "oauth_link_state", caller: ALICE }

  it.each([
    ["a sign-in state at a sign-in callback", signIn, expectSignIn, { _tag: "Valid" }],
    ["a link state of the caller at a link callback", link, expectLink, { _tag: "Valid" }],
    ["a link state at a sign-in callback", link, expectSignIn, { _tag: "Invalid", problem: "purpose" }],
    ["a sign-in state at a link callback", signIn, expectLink, { _tag: "Invalid", problem: "purpose" }],
    [
      "a state of another provider",
      signIn,
      { ...expectSignIn, provider: "google" },
      { _tag: "Invalid", problem: "provider" }
    ],
    [
      "another binding",
      signIn,
      { ...expectSignIn, bindingDigest: otherDigest },
      { _tag: "Invalid", problem: "binding" }
    ],
    [
      "a truncated binding",
      signIn,
      { ...expectSignIn, bindingDigest: digest.slice(1) },
      { _tag: "Invalid", problem: "binding" }
    ],
    ["a link state of another user", link, { ...expectLink, caller: BOB }, { _tag: "Invalid", problem: "link_user" }],
    [
      "a link state without its user",
      { ...signIn, purpose: "oauth_link_state" },
      expectLink,
      { _tag: "Invalid", problem: "link_user" }
    ],
    [
      "a sign-in state carrying a user",
      { ...signIn, link_user_id: ALICE },
      expectSignIn,
      { _tag: "Invalid", problem: "link_user" }
    ]
  ] as ReadonlyArray<readonly [string, OAuthStateClaims, StateExpectation, unknown]>)(
    "%s",
    (_, claims, expected, result) => {
      expect(checkState(claims, expected)).toEqual(result)
    }
  )
})

describe("stateClaimsOf", () => {
  const payload: TokenPayload = {
    sub: "github",
    exp: 2,
    iat: 1,
    jti: "j",
    type: "oauth_link_state",
    roles: [],
    extra: {},
    family_id: null,
    iss: "portcullis",
    binding_digest: "a".repeat(64),
    nonce: "n",
    provider: "github",
    redirect_uri: "https://app.example/cb",
    link_user_id: ALICE
  }

  it("reads a complete state, the link user included", () => {
    expect(stateClaimsOf(payload)).toEqual(
      Option.some({
        purpose: "oauth_link_state",
        binding_digest: "a".repeat(64),
        nonce: "n",
        provider: "github",
        redirect_uri: "https://app.example/cb",
        link_user_id: ALICE
      })
    )
  })

  it.each([
    ["another purpose", { type: "access" }],
    ["no binding digest", { binding_digest: undefined }],
    ["a binding digest that is no SHA-256", { binding_digest: "abc" }],
    ["no nonce", { nonce: undefined }],
    ["no provider", { provider: undefined }],
    ["no redirect URI", { redirect_uri: undefined }]
  ] as ReadonlyArray<readonly [string, Partial<TokenPayload>]>)("is none for %s", (_, change) => {
    expect(Option.isNone(stateClaimsOf({ ...payload, ...change }))).toBe(true)
  })
})
