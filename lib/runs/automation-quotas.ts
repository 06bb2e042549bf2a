import { automationQuotaDefaults } from '#lib/config/settings';
import { RateLimited } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { TenantStore } from '#lib/tenancy/tenant-store';

/**
 * Per-client bounds on automation (docs/rpa.md, "Bounded automation"): runs started per hour and per
 * UTC day, and runs in flight. Every run is a login and minutes of a browser on a customer's payer
 * portal, so these are checked before anything is queued; beyond them the start is 429 with
 * Retry-After. The client's own quotas (its Client item, `set-automation-quotas`), else the defaults.
 *
 * Each bound is one conditional write, so simultaneous starts cannot pass it together. Runs in flight
 * are a counter written with each execution's flight; a flight also ends at its execution's timeout
 * when nobody lands it (a worker that died), which the counter cannot see. So a refusal recounts the
 * live flights, corrects the counter if nothing changed meanwhile, and tries once more.
 */
export interface AutomationQuotas {
  runsPerHour: number;
  runsPerDay: number;
  runsInFlight: number;
}

/** Port: the counters behind the quotas. */
export interface AutomationUsageStore {
  /** Counts `runs` more in a window unless that passes `limit`; false then. The count expires with the window. */
  countRuns(clientId: string, window: string, runs: number, limit: number, expiresAt: Date): Promise<boolean>;
  /** Takes back a count (a start that did not happen). */
  uncountRuns(clientId: string, window: string, runs: number): Promise<void>;
  /**
   * An execution of `runs` runs in flight until it ends or `until` (its timeout) passes, counted with
   * the client's runs in flight unless that passes `limit`: false then. The count and the flight are
   * written together or not at all.
   */
  startFlight(clientId: string, executionName: string, runs: number, until: Date, limit: number): Promise<boolean>;
  /**
   * The runs of the client's flights live at `now` (not landed, not past their timeout); the count set
   * to them unless a flight started or landed meanwhile.
   */
  recountFlights(clientId: string, now: Date): Promise<number>;
  /** The execution landed: its flight is gone, its runs taken off the count if it was still live at `now`. */
  endFlight(clientId: string, executionName: string, now: Date): Promise<void>;
}

export interface AutomationQuotaDependencies {
  usage: AutomationUsageStore;
  tenants: Pick<TenantStore, 'getClient'>;
  defaults?: () => AutomationQuotas;
  now?: () => Date;
}

const HOUR_MS = 3_600_000;
/** A run in flight ends within seconds to minutes: ask again in half a minute. */
const IN_FLIGHT_RETRY_SECONDS = 30;

const windowsAt = (at: Date) => {
  const hourStart = new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
  const dayStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return {
    hour: { name: `H#${hourStart.toISOString().slice(0, 13)}`, ends: new Date(hourStart.getTime() + HOUR_MS) },
    day: { name: `D#${dayStart.toISOString().slice(0, 10)}`, ends: new Date(dayStart.getTime() + 24 * HOUR_MS) },
  };
};

const secondsUntil = (end: Date, now: Date) => Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));

/**
 * Puts the execution in flight unless the client's bound refuses it; undefined then, else the runs it
 * has in flight. A refusal may count flights that ended without landing (a worker that died): they are
 * recounted and the start tried once more.
 */
async function takeOff(
  usage: AutomationUsageStore,
  flight: { clientId: string; executionName: string; runs: number; until: Date; limit: number },
  at: Date,
): Promise<number | undefined> {
  const { clientId, executionName, runs, until, limit } = flight;
  const start = () => usage.startFlight(clientId, executionName, runs, until, limit);
  if (await start()) return undefined;
  const inFlight = await usage.recountFlights(clientId, at);
  return (await start()) ? undefined : inFlight;
}

export const automationQuotas = ({
  usage,
  tenants,
  defaults = automationQuotaDefaults,
  now = () => new Date(),
}: AutomationQuotaDependencies) => {
  const quotasOf = async (clientId: string): Promise<AutomationQuotas> => {
    const client = await tenants.getClient(clientId);
    const fallback = defaults();
    return {
      runsPerHour: client?.automationRunsPerHour ?? fallback.runsPerHour,
      runsPerDay: client?.automationRunsPerDay ?? fallback.runsPerDay,
      runsInFlight: client?.automationRunsInFlight ?? fallback.runsInFlight,
    };
  };

  const refused = (message: string, retryAfterSeconds: number, quota: string, limit: number) =>
    new RateLimited(message, retryAfterSeconds, { quota, limit });

  return {
    /**
     * Admits an execution of `runs` runs for the client, or throws RateLimited: counted in the hour and
     * the day, in flight until it ends or `flightSeconds` (its timeout) pass.
     */
    admit: async (clientId: string, executionName: string, runs: number, flightSeconds: number) => {
      const at = now();
      const quotas = await quotasOf(clientId);
      const until = new Date(at.getTime() + flightSeconds * 1000);
      const flight = { clientId, executionName, runs, until, limit: quotas.runsInFlight };
      const inFlight = await takeOff(usage, flight, at);
      if (inFlight !== undefined) {
        throw refused(
          `This client has ${inFlight} automation runs in flight; at most ${quotas.runsInFlight} may be. Retry once some have ended.`,
          IN_FLIGHT_RETRY_SECONDS,
          'runsInFlight',
          quotas.runsInFlight,
        );
      }
      const land = () => usage.endFlight(clientId, executionName, now());
      const { hour, day } = windowsAt(at);
      if (!(await usage.countRuns(clientId, hour.name, runs, quotas.runsPerHour, hour.ends))) {
        await land();
        throw refused(
          `Starting ${runs} more automation runs would pass this client's ${quotas.runsPerHour} runs per hour.`,
          secondsUntil(hour.ends, at),
          'runsPerHour',
          quotas.runsPerHour,
        );
      }
      if (!(await usage.countRuns(clientId, day.name, runs, quotas.runsPerDay, day.ends))) {
        await Promise.all([usage.uncountRuns(clientId, hour.name, runs), land()]);
        throw refused(
          `Starting ${runs} more automation runs would pass this client's ${quotas.runsPerDay} runs per UTC day.`,
          secondsUntil(day.ends, at),
          'runsPerDay',
          quotas.runsPerDay,
        );
      }
      const admitted = { hour: hour.name, day: day.name };
      /** The start did not happen after all: its runs are given back. Never throws. */
      const giveBack = async () => {
        await Promise.all([
          usage.uncountRuns(clientId, admitted.hour, runs),
          usage.uncountRuns(clientId, admitted.day, runs),
          land(),
        ]).catch((error: Error) => log.error('Automation quota give-back failed', { errorName: error?.name }));
      };
      return { giveBack };
    },

    ...flightLandings(usage),
  };
};

/**
 * The end of an execution's flight, for the functions that end runs (the workers and recorders): the
 * usage store alone, no quotas to read.
 */
export const flightLandings = (usage: Pick<AutomationUsageStore, 'endFlight'>) => ({
  /** The execution ended: its runs are no longer in flight. Never throws (the flight expires anyway). */
  landed: async (clientId: string, executionName: string) => {
    await usage
      .endFlight(clientId, executionName, new Date())
      .catch((error: Error) => log.warn('Automation flight end failed', { errorName: error?.name }));
  },
});

export type AutomationQuotaService = ReturnType<typeof automationQuotas>;
