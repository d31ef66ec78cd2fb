import { catalog } from "../versions/catalog";

/**
 * What Hetzner Cloud is: its locations and their network zones, its load-balancer types and the
 * size of a spread placement group. The stack config's schema offers these values, and the
 * platform's builders rely on them.
 */

export type HetznerLocation = keyof typeof catalog.hcloud.networkZoneOfLocation;

/** The network zone of each location; an hcloud Network subnet lives in exactly one. */
export const networkZoneOf: Readonly<Record<HetznerLocation, string>> = catalog.hcloud.networkZoneOfLocation;

/** Hetzner Cloud locations CAPH accepts (also the CAPH failure domains). */
export const hetznerLocations = Object.keys(networkZoneOf) as [HetznerLocation, ...HetznerLocation[]];

export const loadBalancerTypes = ["lb11", "lb21", "lb31"] as const;

/**
 * Hetzner puts at most 10 servers in a spread placement group; a rolling update adds one
 * surge server, so a pool in its own group may have at most 9 replicas.
 */
export const placementGroupServerLimit = 10;
