import { readFileSync } from "node:fs";
import { createServer } from "node:net";

// Loopback ports for the servers tests start (etcd, kube-apiserver, CAPI managers). A port from
// listen(0) is only free until the next listen(0) or outgoing connection anywhere on the machine
// takes it, and vitest runs test files in parallel processes. So each process takes its ports from
// its own block, from 10000 up and outside the kernel's ephemeral range (which the kernel never
// hands out by itself), and checks each is bindable before handing it out:
//   slot  = STRYKER_MUTATOR_WORKER * slotsPerStrykerWorker + VITEST_POOL_ID (each 0 when unset)
//   block = [portFloor + slot * blockSize, + blockSize), refused if it overlaps the ephemeral range.
// vitest numbers its concurrent workers 1..maxWorkers; StrykerJS runs one vitest per mutator
// worker (0, 1, …), each numbering from 1 again, hence both. Outside vitest the slot is 0.

/** An inclusive port range. */
export interface PortRange {
  low: number;
  high: number;
}

export const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range";
/** Linux's default, for when the sysctl cannot be read. */
export const defaultEphemeralRange: PortRange = { low: 32768, high: 60999 };
/** Below this are well-known and commonly configured service ports. */
export const portFloor = 10_000;
/** Per process; a server takes 3, the CAPI loop 6 more, and the counter wraps. */
export const blockSize = 128;
/** Slots per vitest run: VITEST_POOL_ID (1..maxWorkers) must stay below this. */
export const slotsPerStrykerWorker = 32;

/** The ephemeral range from the sysctl's text ("32768\t60999"), or the default if it does not parse. */
export function parseEphemeralRange(text: string | undefined): PortRange {
  const match = /^\s*(\d+)\s+(\d+)\s*$/.exec(text ?? "");
  if (!match) return defaultEphemeralRange;
  const [low, high] = [Number(match[1]), Number(match[2])];
  return low >= 1 && low <= high && high <= 65535 ? { low, high } : defaultEphemeralRange;
}

export function readEphemeralRange(file = ephemeralRangeFile): PortRange {
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    text = undefined;
  }
  return parseEphemeralRange(text);
}

function envIndex(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number {
  const value = env[name];
  if (value === undefined || value === "") return 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`test ports: ${name}=${value} is not an integer in ${min}..${max}`);
  return n;
}

/** This process's slot (see the top of this file); throws on values that would make slots overlap. */
export function workerSlot(env: NodeJS.ProcessEnv): number {
  const pool = envIndex(env, "VITEST_POOL_ID", 1, slotsPerStrykerWorker - 1);
  const stryker = envIndex(env, "STRYKER_MUTATOR_WORKER", 0, 1000);
  return stryker * slotsPerStrykerWorker + pool;
}

/** The block of a slot; throws, naming the sysctl, if it would overlap the ephemeral range. */
export function portBlock(slot: number, ephemeral: PortRange): PortRange {
  const low = portFloor + slot * blockSize;
  const block = { low, high: low + blockSize - 1 };
  if (block.high > 65535 || (block.low <= ephemeral.high && block.high >= ephemeral.low)) {
    const slots = Math.max(0, Math.floor((ephemeral.low - portFloor) / blockSize));
    throw new Error(
      `test ports: slot ${slot} needs ports ${block.low}-${block.high}, which overlap the kernel's ephemeral range ` +
        `${ephemeral.low}-${ephemeral.high} (${ephemeralRangeFile}); below it there is room for ${slots} slot(s) of ${blockSize}. ` +
        `Run fewer vitest workers or StrykerJS workers, or raise the range's start (sysctl net.ipv4.ip_local_port_range).`,
    );
  }
  return block;
}

/** Whether a listener can bind 127.0.0.1:port right now (as the servers do, with SO_REUSEADDR). */
export function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => {
      resolve(false);
    });
    server.listen(port, "127.0.0.1", () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}

/**
 * Hands out the ports of one block, each once, in order from `start` and wrapping; a port that
 * cannot be bound now (a leftover of a killed run, another service) is skipped and used up too.
 */
export class PortAllocator {
  private next = 0;

  constructor(
    readonly block: PortRange,
    private readonly start = 0,
    private readonly bindable: (port: number) => Promise<boolean> = canBind,
  ) {}

  async take(): Promise<number> {
    const size = this.block.high - this.block.low + 1;
    for (let tried = 0; tried < size; tried++) {
      // Advanced before the await, so concurrent calls get different ports.
      const port = this.block.low + ((this.start + this.next++) % size);
      if (await this.bindable(port)) return port;
    }
    throw new Error(`test ports: none of ${this.block.low}-${this.block.high} can be bound on 127.0.0.1`);
  }
}

let allocator: PortAllocator | undefined;

/**
 * A loopback port in this process's block, not handed out before by this process and bindable
 * now. The start in the block is pid-derived, so the next process in the same slot (vitest forks
 * one per test file) and a second vitest run on the machine mostly begin elsewhere.
 */
export function freePort(): Promise<number> {
  allocator ??= new PortAllocator(portBlock(workerSlot(process.env), readEphemeralRange()), process.pid % blockSize);
  return allocator.take();
}
