import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { log } from '#lib/observability/logger';
import { SERVICE_NAME } from '#lib/observability/names';
import { appendAuditLine, localAuditFileOf } from './audit-file.ts';
import { AUDIT_MARKER, AUDIT_RECORD_FIELDS, type AuditRecord } from './audit-record.ts';

/*
 * The audit trail's writer: one JSON line per record on stdout, through a Powertools Logger of its own.
 * On AWS, Lambda sends stdout to the function's log group, where a subscription filter on the marker
 * ships the line to the locked audit bucket (infra/constructs/audit-trail.ts): nothing in the request
 * path waits on the network. Locally the same line is also appended to the audit file (audit-file.ts).
 *
 * Its own Logger rather than the service's (lib/observability/logger.ts), for three reasons: its level
 * is fixed (INFO, given to the constructor, which Powertools ranks above POWERTOOLS_LOG_LEVEL and
 * LOG_LEVEL), so no log level setting silences the trail; its formatter writes the record's nested
 * `resource`, which the service log's allow-list refuses; and the service log cannot write the marker.
 */

/** Keeps null fields: a record says "not known" explicitly (Powertools drops null top-level keys). */
class AuditItem extends LogItem {
  override prepareForPrint() {}
}

/** Powertools' first fields, the marker, then the record's fields in order, and nothing else. */
class AuditFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const line: LogAttributes = {
      level: attributes.logLevel.toLowerCase(),
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      ...(attributes.xRayTraceId ? { xray_trace_id: attributes.xRayTraceId } : {}),
      [AUDIT_MARKER.field]: AUDIT_MARKER.value,
    };
    for (const field of AUDIT_RECORD_FIELDS) line[field] = additional[field] ?? null;
    return new AuditItem({ attributes: line });
  }
}

/** Prints to stdout as any Logger does, then appends the same line to the local audit file, if there is one. */
class AuditLogger extends Logger {
  protected override printLog(level: number, item: LogItem): void {
    super.printLog(level, item);
    const file = localAuditFileOf();
    if (!file) return;
    try {
      appendAuditLine(file, JSON.stringify(item.getAttributes(), this.getJsonReplacer()));
    } catch (error) {
      // A local copy only: stdout has the line. Said loudly, so a test or a developer notices.
      log.warn('Audit line not copied to the local audit file', { errorName: (error as Error).name });
    }
  }
}

const auditLogger = new AuditLogger({
  serviceName: SERVICE_NAME,
  logLevel: 'INFO',
  logFormatter: new AuditFormatter(),
});

/** Writes one record: one line, synchronously, before this returns. */
export const writeAuditRecord = (record: AuditRecord) => {
  auditLogger.info(record.phase === 'intent' ? 'Audit intent' : 'Audit outcome', { ...record });
};
