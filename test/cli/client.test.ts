import { describe, expect, it } from "@effect/vitest"
import { runCliInProcess } from "../support/cliRun.js"
import { temporaryDatabase } from "../support/processes.js"

const json = (text: string) => JSON.parse(text) as Record<string, unknown>

describe("portcullis client", () => {
  it("adds a confidential client with its secret shown once and stored as a digest, lists, shows and removes it, audited", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    const added = await runCliInProcess(
      [
        "client",
        "add",
        "--name",
        "Grafana",
        "--redirect-uri",
        "https://grafana.example.com/login/generic_oauth",
        "--redirect-uri",
        "http://127.0.0.1/cb",
        "--scope",
        "reports:read"
      ],
      vars
    )
    expect(added.status, added.stderr).toBe(0)
    const client = json(added.stdout)
    expect(client).toMatchObject({
      name: "Grafana",
      public: false,
      first_party: false,
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["https://grafana.example.com/login/generic_oauth", "http://127.0.0.1/cb"],
      scopes: ["reports:read"],
      grants: ["authorization_code"]
    })
    const clientId = String(client.client_id)
    const secret = String(client.client_secret)
    expect(clientId).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(added.stderr).toContain("not shown again")

    const listed = await runCliInProcess(["client", "list"], vars)
    expect(listed.status).toBe(0)
    expect(listed.stdout).not.toContain(secret)
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ client_id: clientId, name: "Grafana" })])
    const shown = await runCliInProcess(["client", "show", clientId], vars)
    expect(json(shown.stdout)).toMatchObject({ client_id: clientId })
    expect(shown.stdout).not.toContain(secret)

    const rotated = await runCliInProcess(["client", "rotate-secret", clientId], vars)
    expect(rotated.status, rotated.stderr).toBe(0)
    const newSecret = String(json(rotated.stdout).client_secret)
    expect(newSecret).not.toBe(secret)

    const removed = await runCliInProcess(["client", "remove", clientId], vars)
    expect(removed.status).toBe(0)
    expect(removed.stdout).toContain(`Removed ${clientId} (Grafana)`)
    const gone = await runCliInProcess(["client", "show", clientId], vars)
    expect(gone.status).toBe(1)
    expect(gone.stderr.trim()).toBe(`No client has the client_id ${clientId}`)

    const audit = await runCliInProcess(["audit", "export", "--since", "1h", "--format", "jsonl"], vars)
    const types = audit.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; details: Record<string, unknown>; actor_kind: string })
    expect(types.map((event) => [event.type, event.details.client_id])).toEqual([
      ["oidc.client_added", clientId],
      ["oidc.client_secret_rotated", clientId],
      ["oidc.client_removed", clientId]
    ])
    expect(audit.stdout).not.toContain(secret)
    expect(audit.stdout).not.toContain(newSecret)
  })

  it("adds a public client without a secret, which has none to rotate", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    const added = await runCliInProcess(
      ["client", "add", "--name", "CLI tool", "--public", "--redirect-uri", "http://127.0.0.1/callback"],
      vars
    )
    expect(added.status, added.stderr).toBe(0)
    const client = json(added.stdout)
    expect(client).toMatchObject({ public: true, token_endpoint_auth_method: "none" })
    expect(client).not.toHaveProperty("client_secret")
    expect(added.stderr).toBe("")
    const rotated = await runCliInProcess(["client", "rotate-secret", String(client.client_id)], vars)
    expect(rotated.status).toBe(1)
    expect(rotated.stderr).toContain("is public: it has no secret")
  })

  it("refuses what cannot be a client, in one line, storing nothing", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    for (const [args, said] of [
      [["--name", "X"], "needs at least one --redirect-uri"],
      [["--name", "X", "--redirect-uri", "http://app.example.com/cb"], "must be https"],
      [["--name", "X", "--redirect-uri", "https://app.example.com/cb#frag"], "fragment"],
      [["--name", "X", "--redirect-uri", "/cb"], "absolute"],
      [["--name", " ", "--redirect-uri", "https://app.example.com/cb"], "--name must be 1 to 100"],
      [["--name", "X", "--redirect-uri", "https://a.example/cb", "--scope", "openid"], "standard scope"],
      [["--name", "X", "--redirect-uri", "https://a.example/cb", "--scope", 'a"b'], "is not a scope"],
      [["--name", "X", "--public", "--grant", "client_credentials"], "cannot use client_credentials"]
    ] as const) {
      const run = await runCliInProcess(["client", "add", ...args], vars)
      expect(run.status, args.join(" ")).toBe(1)
      expect(run.stderr.trim().split("\n"), args.join(" ")).toEqual([expect.stringContaining(said)])
    }
    expect(JSON.parse((await runCliInProcess(["client", "list"], vars)).stdout)).toEqual([])
  })

  it("adds a machine client for client_credentials alone, without redirect URIs", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    const run = await runCliInProcess(["client", "add", "--name", "Nightly job", "--grant", "client_credentials"], vars)
    expect(run.status, run.stderr).toBe(0)
    expect(json(run.stdout)).toMatchObject({ grants: ["authorization_code", "client_credentials"], redirect_uris: [] })
  })
})
