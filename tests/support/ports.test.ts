import { createServer, type AddressInfo, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  blockSize,
  canBind,
  defaultEphemeralRange,
  freePort,
  parseEphemeralRange,
  PortAllocator,
  portBlock,
  portFloor,
  readEphemeralRange,
  slotsPerStrykerWorker,
  workerSlot,
  type PortRange,
} from "./ports";

const overlap = (a: PortRange, b: PortRange): boolean => a.low <= b.high && b.low <= a.high;

const listening: Server[] = [];
afterEach(async () => {
  await Promise.all(listening.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});
const listen = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    listening.push(server);
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      resolve((server.address() as AddressInfo).port);
    });
  });

describe("the kernel's ephemeral range", () => {
  it("is read from the sysctl's text", () => {
    expect(parseEphemeralRange("32768\t60999\n")).toEqual({ low: 32768, high: 60999 });
    expect(parseEphemeralRange("1024 65535")).toEqual({ low: 1024, high: 65535 });
  });

  it("falls back to Linux's default when unreadable or nonsense", () => {
    expect(defaultEphemeralRange).toEqual({ low: 32768, high: 60999 });
    expect(readEphemeralRange("/nonexistent/ip_local_port_range")).toEqual(defaultEphemeralRange);
    for (const text of [undefined, "", "32768", "a b", "60999 32768", "0 100", "1024 70000"]) expect(parseEphemeralRange(text)).toEqual(defaultEphemeralRange);
  });
});

describe("workerSlot", () => {
  it("is 0 outside vitest and StrykerJS, the pool id inside vitest", () => {
    expect(workerSlot({})).toBe(0);
    expect(workerSlot({ VITEST_POOL_ID: "" })).toBe(0);
    expect(workerSlot({ VITEST_POOL_ID: "1" })).toBe(1);
    expect(workerSlot({ VITEST_POOL_ID: "4" })).toBe(4);
  });

  it("gives each StrykerJS worker its own run of slots", () => {
    expect(workerSlot({ STRYKER_MUTATOR_WORKER: "0", VITEST_POOL_ID: "1" })).toBe(1);
    expect(workerSlot({ STRYKER_MUTATOR_WORKER: "1", VITEST_POOL_ID: "1" })).toBe(slotsPerStrykerWorker + 1);
    expect(workerSlot({ STRYKER_MUTATOR_WORKER: "2", VITEST_POOL_ID: "3" })).toBe(2 * slotsPerStrykerWorker + 3);
  });

  it("refuses ids that would make slots overlap", () => {
    for (const env of [{ VITEST_POOL_ID: "0" }, { VITEST_POOL_ID: String(slotsPerStrykerWorker) }, { VITEST_POOL_ID: "x" }, { VITEST_POOL_ID: "1.5" }, { STRYKER_MUTATOR_WORKER: "-1" }])
      expect(() => workerSlot(env)).toThrow(/test ports: (VITEST_POOL_ID|STRYKER_MUTATOR_WORKER)=.* is not an integer/);
  });
});

describe("portBlock", () => {
  it("puts slot 0 at the floor, each next slot one block up", () => {
    expect(portBlock(0, defaultEphemeralRange)).toEqual({ low: portFloor, high: portFloor + blockSize - 1 });
    expect(portBlock(3, defaultEphemeralRange)).toEqual({ low: portFloor + 3 * blockSize, high: portFloor + 4 * blockSize - 1 });
  });

  it("gives different pool ids and StrykerJS workers disjoint blocks, all outside the ephemeral range", () => {
    const blocks: PortRange[] = [];
    for (const stryker of [undefined, "0", "1", "2", "3"])
      for (const pool of [undefined, "1", "2", "3", "4", "8", "16"]) {
        const env = { ...(stryker === undefined ? {} : { STRYKER_MUTATOR_WORKER: stryker }), ...(pool === undefined ? {} : { VITEST_POOL_ID: pool }) };
        const block = portBlock(workerSlot(env), defaultEphemeralRange);
        expect(overlap(block, defaultEphemeralRange)).toBe(false);
        expect(block.low).toBeGreaterThanOrEqual(portFloor);
        expect(block.high - block.low + 1).toBe(blockSize);
        blocks.push(block);
      }
    const distinct = [...new Map(blocks.map((block) => [block.low, block])).values()];
    for (const [i, a] of distinct.entries()) for (const b of distinct.slice(i + 1)) expect(overlap(a, b)).toBe(false);
    // Undefined and "0" Stryker workers share slots, so fewer distinct blocks than combinations.
    expect(distinct).toHaveLength(4 * 7);
  });

  it("negative control: blocks one port wider would overlap their neighbour", () => {
    const wide = (slot: number): PortRange => ({ low: portFloor + slot * blockSize, high: portFloor + (slot + 1) * blockSize });
    expect(overlap(wide(0), wide(1))).toBe(true);
    expect(overlap(portBlock(0, defaultEphemeralRange), portBlock(1, defaultEphemeralRange))).toBe(false);
  });

  it("refuses, naming the sysctl, when the block would reach the ephemeral range", () => {
    const lastFitting = Math.floor((defaultEphemeralRange.low - portFloor) / blockSize) - 1;
    expect(portBlock(lastFitting, defaultEphemeralRange).high).toBeLessThan(defaultEphemeralRange.low);
    expect(() => portBlock(lastFitting + 1, defaultEphemeralRange)).toThrow(/overlap the kernel's ephemeral range 32768-60999 \(\/proc\/sys\/net\/ipv4\/ip_local_port_range\)/);
    expect(() => portBlock(0, { low: 1024, high: 65535 })).toThrow(/room for 0 slot\(s\)/);
    expect(() => portBlock(0, { low: portFloor + 10, high: 60999 })).toThrow(/overlap the kernel's ephemeral range/);
    expect(portBlock(0, { low: 1024, high: 5000 })).toEqual({ low: portFloor, high: portFloor + blockSize - 1 });
  });
});

describe("PortAllocator", () => {
  const block = { low: 20_000, high: 20_009 };
  const always = () => Promise.resolve(true);

  it("hands out each port of its block once, from its start, then wraps", async () => {
    const ports = new PortAllocator(block, 7, always);
    const taken: number[] = [];
    for (let i = 0; i < 10; i++) taken.push(await ports.take());
    expect(taken).toEqual([20_007, 20_008, 20_009, 20_000, 20_001, 20_002, 20_003, 20_004, 20_005, 20_006]);
    expect(await ports.take()).toBe(20_007);
  });

  it("gives concurrent callers different ports", async () => {
    const slow = (port: number) =>
      new Promise<boolean>((resolve) => {
        setTimeout(() => {
          resolve(port % 2 === 0);
        }, 5);
      });
    const taken = await Promise.all(Array.from({ length: 5 }, () => new PortAllocator(block, 0, slow)).map((ports) => ports.take()));
    // Separate allocators over one block do collide: the guarantee is per allocator.
    expect(new Set(taken).size).toBe(1);
    const shared = new PortAllocator(block, 0, slow);
    const together = await Promise.all(Array.from({ length: 5 }, () => shared.take()));
    expect(new Set(together).size).toBe(5);
    for (const port of together) expect(port % 2).toBe(0);
  });

  it("skips ports that cannot be bound, and fails when none can", async () => {
    const busy = new Set([20_000, 20_001, 20_003]);
    const ports = new PortAllocator(block, 0, (port) => Promise.resolve(!busy.has(port)));
    expect([await ports.take(), await ports.take()]).toEqual([20_002, 20_004]);
    await expect(new PortAllocator(block, 0, () => Promise.resolve(false)).take()).rejects.toThrow("test ports: none of 20000-20009 can be bound on 127.0.0.1");
  });

  it("skips a port something really listens on", async () => {
    const taken = await listen(0);
    expect(await canBind(taken)).toBe(false);
    await expect(new PortAllocator({ low: taken, high: taken }, 0).take()).rejects.toThrow(`none of ${taken}-${taken} can be bound`);
    // The neighbour is vouched for by the stub only: any port may be in use on a shared machine.
    const ports = new PortAllocator({ low: taken, high: taken + 1 }, 0, (port) => (port === taken ? canBind(port) : Promise.resolve(true)));
    expect(await ports.take()).toBe(taken + 1);
  });
});

describe("freePort", () => {
  it("hands this worker distinct, bindable ports from its block, outside the ephemeral range", async () => {
    const ephemeral = readEphemeralRange();
    const mine = portBlock(workerSlot(process.env), ephemeral);
    const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()));
    expect(new Set(ports).size).toBe(6);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(mine.low);
      expect(port).toBeLessThanOrEqual(mine.high);
      expect(overlap({ low: port, high: port }, ephemeral)).toBe(false);
      await listen(port);
    }
  });

  it("negative control: a port from listen(0) is in the ephemeral range, where freePort's never are", async () => {
    const ephemeral = readEphemeralRange();
    const port = await listen(0);
    expect(overlap({ low: port, high: port }, ephemeral)).toBe(true);
  });
});
