import { describe, expect, it } from "@effect/vitest"
import { runCliInProcess } from "../support/cliRun.js"
import { temporaryDatabase } from "../support/processes.js"

describe("portcullis resource", () => {
  it("registers a resource by its normalised URI, lists and removes it, audited", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    const added = await runCliInProcess(
      ["resource", "add", "--uri", "HTTPS://MCP.Example.com:443/mcp/", "--scope", "mcp:tools", "--scope", "mcp:tools"],
      vars
    )
    expect(added.status, added.stderr).toBe(0)
    expect(JSON.parse(added.stdout)).toMatchObject({
      uri: "https://mcp.example.com/mcp",
      scopes: ["mcp:tools"],
      introspecting_client: null
    })
    const again = await runCliInProcess(["resource", "add", "--uri", "https://mcp.example.com/mcp"], vars)
    expect(again.status).toBe(1)
    expect(again.stderr.trim()).toBe("The resource https://mcp.example.com/mcp is already registered")
    const listed = await runCliInProcess(["resource", "list"], vars)
    expect((JSON.parse(listed.stdout) as Array<{ uri: string }>).map((one) => one.uri)).toEqual([
      "https://mcp.example.com/mcp"
    ])
    const removed = await runCliInProcess(["resource", "remove", "https://mcp.example.com/mcp/"], vars)
    expect(removed.status, removed.stderr).toBe(0)
    expect(removed.stdout).toContain("Removed https://mcp.example.com/mcp")
    const gone = await runCliInProcess(["resource", "remove", "https://mcp.example.com/mcp"], vars)
    expect(gone.status).toBe(1)
    const audit = await runCliInProcess(["audit", "export", "--since", "1h", "--format", "jsonl"], vars)
    const events = audit.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; details: Record<string, unknown> })
    expect(events.map((event) => [event.type, event.details.uri])).toEqual([
      ["oidc.resource_added", "https://mcp.example.com/mcp"],
      ["oidc.resource_removed", "https://mcp.example.com/mcp"]
    ])
  })

  it("refuses a URI that cannot be a resource, and an introspecting client that is not a confidential one", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    for (const uri of ["mcp.example.com", "https://mcp.example.com/#x", "urn:x:y"]) {
      const refused = await runCliInProcess(["resource", "add", "--uri", uri], vars)
      expect(refused.status, uri).toBe(1)
      expect(refused.stderr).toMatch(/absolute http\(s\) URI/)
    }
    const noClient = await runCliInProcess(
      ["resource", "add", "--uri", "https://api.example.com", "--client", "nobody"],
      vars
    )
    expect(noClient.status).toBe(1)
    expect(noClient.stderr.trim()).toBe("No confidential client has the client_id nobody")
    const listed = await runCliInProcess(["resource", "list"], vars)
    expect(JSON.parse(listed.stdout)).toEqual([])
  })
})
