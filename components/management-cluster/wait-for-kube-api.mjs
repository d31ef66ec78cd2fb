#!/usr/bin/env node
// Waits until a Kubernetes API answers /readyz with the given client certificate.
// Used by the ManagementCluster component (a command:local:Command) after the servers
// boot. Bounded: fails with a clear message after KUBE_API_WAIT_SECONDS (default 900).
// Credentials come from the environment so they never appear on a command line.
import https from "node:https";

const required = ["KUBE_API_SERVER", "KUBE_CA_PEM", "KUBE_CLIENT_CERT_PEM", "KUBE_CLIENT_KEY_PEM"];
const missing = required.filter((name) => !process.env[name]);
if (missing.length > 0) {
  console.error(`wait-for-kube-api: missing environment variables: ${missing.join(", ")}`);
  process.exit(2);
}

const server = process.env.KUBE_API_SERVER;
const deadline = Date.now() + Number(process.env.KUBE_API_WAIT_SECONDS ?? 900) * 1000;
const intervalMs = Number(process.env.KUBE_API_POLL_MILLISECONDS ?? 5000);

function probe() {
  return new Promise((resolve) => {
    const request = https.get(
      new URL("/readyz", server),
      {
        ca: process.env.KUBE_CA_PEM,
        cert: process.env.KUBE_CLIENT_CERT_PEM,
        key: process.env.KUBE_CLIENT_KEY_PEM,
        timeout: 10_000,
      },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200 ? "ready" : `HTTP ${response.statusCode}`);
      },
    );
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", (error) => resolve(error.message));
  });
}

let last = "";
for (;;) {
  const result = await probe();
  if (result === "ready") {
    console.log(`wait-for-kube-api: ${server} is ready`);
    process.exit(0);
  }
  if (result !== last) {
    console.log(`wait-for-kube-api: ${server} not ready yet (${result})`);
    last = result;
  }
  if (Date.now() + intervalMs > deadline) {
    console.error(`wait-for-kube-api: gave up on ${server}; last answer: ${result}. Check the servers' cloud-init log (/var/log/cloud-init-output.log) and the load balancer's target health.`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, intervalMs));
}
