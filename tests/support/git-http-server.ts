import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// A Git server for tests: Git's own smart-HTTP backend (`git http-backend`, the CGI program Git
// ships) behind a loopback HTTP server that asks for basic auth, as a private fleet repository
// does. Clients (Flux's source-controller) speak the real protocol to the real Git.

/** A running server; `url(repo)` is the clone URL of a bare repository under `root`. */
export interface GitHttpServer {
  url(repository: string): string;
  /** Requests served, e.g. `GET /fleet.git/info/refs?service=git-upload-pack 200`. */
  requests: string[];
  stop(): Promise<void>;
}

/** Serves the bare repositories under `root`; only `credentials` may read. */
export async function startGitHttpServer(root: string, credentials: { username: string; password: string }, port = 0): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const log = (status: number) => requests.push(`${request.method} ${url.pathname}${url.search} ${status}`);
    if (request.headers.authorization !== expected) {
      log(401);
      response.writeHead(401, { "WWW-Authenticate": 'Basic realm="fleet"' }).end();
      return;
    }
    const backend = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env["PATH"],
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        REQUEST_METHOD: request.method ?? "GET",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ""),
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        REMOTE_USER: credentials.username,
        REMOTE_ADDR: request.socket.remoteAddress ?? "127.0.0.1",
        ...(request.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: request.headers["content-encoding"] } : {}),
        ...(request.headers["git-protocol"] ? { GIT_PROTOCOL: String(request.headers["git-protocol"]) } : {}),
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    request.pipe(backend.stdin);
    // CGI output: header lines, a blank line, then the body.
    let head = Buffer.alloc(0);
    let headersSent = false;
    let stderr = "";
    backend.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    backend.stdout.on("data", (chunk: Buffer) => {
      if (headersSent) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n") >= 0 ? head.indexOf("\r\n\r\n") : head.indexOf("\n\n");
      if (end < 0) return;
      const separator = head.indexOf("\r\n\r\n") >= 0 ? 4 : 2;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString().split(/\r?\n/)) {
        const colon = line.indexOf(":");
        const [name, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else headers[name] = value;
      }
      log(status);
      response.writeHead(status, headers);
      headersSent = true;
      response.write(head.subarray(end + separator));
    });
    backend.on("close", (code) => {
      if (!headersSent) {
        log(500);
        response.writeHead(500).end(`git http-backend exited with ${code}: ${stderr}`);
        return;
      }
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => { resolve(); });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: (repository) => `http://127.0.0.1:${bound}/${repository}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => { resolve(); });
      }),
  };
}
