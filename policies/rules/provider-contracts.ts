import semver from "semver";
import { catalog } from "../../infra/model/versions/catalog";
import { stackRule } from "../lib/define";
import { installedVersions, isImported } from "../lib/fleet-resources";

/** A release as semver; `coerce` because chart and provider versions may carry a leading v. */
const release = (version: string): semver.SemVer | null => semver.coerce(version);

/**
 * The providers speak contracts the installed CAPI serves. Versions come from the
 * resources that install them (the operator's provider CRs, the CAREN release); a provider
 * the stack does not install is not checked.
 */
export const providerContracts = stackRule({
  name: "provider-contracts",
  description: `CAPH releases that speak only v1beta1 need a Cluster API that still serves it (< ${catalog.clusterApi.v1beta1RemovedIn}) and within CAPH's supported range; CAREN ≥ ${catalog.caren.minimumClusterApiSince} needs Cluster API ≥ ${catalog.caren.minimumClusterApi}.`,
  enforcementLevel: "mandatory",
  remediationSteps: "Change clusterApi, caph and caren together in infra/model/versions/catalog.ts so their contracts match.",
  validate: (resources, _config, report) => {
    // A shard stack's imported platform is judged by the management stack that installs it.
    const { clusterApi, caph, caren } = installedVersions(resources.filter((resource) => !isImported(resource)));
    const capi = clusterApi === undefined ? null : release(clusterApi);
    if (!capi) return; // no CAPI in this stack: nothing to be compatible with
    const caphRelease = caph === undefined ? null : release(caph);
    if (caphRelease) {
      if (semver.satisfies(caphRelease, catalog.caph.v1beta1OnlyReleases) && semver.gte(capi, catalog.clusterApi.v1beta1RemovedIn)) {
        report(`CAPH ${caph} speaks only the v1beta1 contract, which Cluster API ${clusterApi} no longer serves (removed in ${catalog.clusterApi.v1beta1RemovedIn}); keep Cluster API below it or move to a CAPH release with v1beta2.`);
      }
      const supported = catalog.caph.clusterApi;
      const line = `${capi.major}.${capi.minor}.0`;
      if (semver.lt(line, semver.coerce(supported.min) ?? line) || semver.gt(line, semver.coerce(supported.max) ?? line)) {
        report(`CAPH ${caph} supports Cluster API ${supported.min}–${supported.max}, not ${clusterApi}; pin a Cluster API in that range.`);
      }
    }
    const carenRelease = caren === undefined ? null : release(caren);
    if (carenRelease && semver.gte(carenRelease, catalog.caren.minimumClusterApiSince) && semver.lt(capi, catalog.caren.minimumClusterApi)) {
      report(`CAREN ${caren} needs Cluster API ≥ ${catalog.caren.minimumClusterApi} (it is built on it), found ${clusterApi}; upgrade Cluster API first or pin an older CAREN.`);
    }
  },
});
