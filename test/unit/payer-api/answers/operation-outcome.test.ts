import type { OperationOutcome } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import { asParsed, InvalidRequestResponse, indexR4, validR4 } from './pas-answer-examples.ts';

const read = (outcome: OperationOutcome) => readPasAnswer(asParsed(validR4(outcome)));
const issuesOf = (outcome: OperationOutcome) => {
  const answer = read(outcome);
  if (answer.kind !== 'refused') throw new Error(`expected a refusal, got ${answer.kind}`);
  return answer.issues;
};

beforeAll(indexR4);

describe('PayerIssues of an OperationOutcome', () => {
  it('keeps severity, code, details and expressions, then the deprecated locations', () => {
    expect(
      issuesOf({
        resourceType: 'OperationOutcome',
        issue: [
          {
            severity: 'error',
            code: 'required',
            details: { text: 'Member identifier is required.' },
            diagnostics: 'validator: Claim.patient -> Patient/123 (JOE SMITH, 1947-01-18) has no identifier',
            expression: ['Bundle.entry[0].resource.patient'],
            location: ['/f:Bundle/f:entry[1]'],
          },
          {
            severity: 'warning',
            code: 'business-rule',
            details: { coding: [{ system: 'http://payer.example/issues', code: 'W1', display: 'Late submission' }] },
          },
          { severity: 'information', code: 'informational' },
        ],
      }),
    ).toEqual([
      {
        severity: 'error',
        code: 'required',
        details: 'Member identifier is required.',
        expression: ['Bundle.entry[0].resource.patient', '/f:Bundle/f:entry[1]'],
      },
      { severity: 'warning', code: 'business-rule', details: 'Late submission', expression: [] },
      { severity: 'information', code: 'informational', details: null, expression: [] },
    ]);
  });

  it('never keeps diagnostics (validator output, echoed request values)', () => {
    const answer = read({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'fatal', code: 'exception', diagnostics: 'JOE SMITH 12345678901' }],
    });
    expect(JSON.stringify(answer)).not.toContain('SMITH');
    expect(answer).toEqual({
      kind: 'refused',
      issues: [{ severity: 'fatal', code: 'exception', details: null, expression: [] }],
    });
  });

  it('leaves out issues whose severity or code is out of form, and keeps the rest', () => {
    const answer = readPasAnswer({
      resourceType: 'OperationOutcome',
      issue: [
        { severity: 'catastrophic', code: 'invalid' },
        { severity: 'error', code: 'not a code!' },
        { severity: 'error' },
        { severity: ['error'], code: 'invalid' },
        'error',
        null,
        { severity: 'error', code: 'invalid', details: { text: 42 }, expression: 'Bundle.entry[0]' },
      ],
    });
    expect(answer).toEqual({
      kind: 'refused',
      issues: [{ severity: 'error', code: 'invalid', details: null, expression: [] }],
    });
  });

  it('keeps 20 issues, 10 expressions each, texts of 500 characters, expressions of 300 printable ones', () => {
    const issue = {
      severity: 'error',
      code: 'invalid',
      details: { text: `${'x'.repeat(1_000_000)}` },
      expression: [
        'Bundle.entry[0]\u202e',
        'y'.repeat(301),
        ' Bundle.entry[0]',
        ...Array.from({ length: 12 }, (_, index) => `Bundle.entry[${index}].resource`),
      ],
    };
    const answer = readPasAnswer({ resourceType: 'OperationOutcome', issue: Array.from({ length: 30 }, () => issue) });
    if (answer.kind !== 'refused') throw new Error('expected a refusal');
    expect(answer.issues).toHaveLength(20);
    expect(answer.issues[0]?.details).toHaveLength(500);
    expect(answer.issues[0]?.expression).toEqual(
      Array.from({ length: 10 }, (_, index) => `Bundle.entry[${index}].resource`),
    );
  });

  it('drops details holding control or format characters, whole', () => {
    for (const text of ['ok\u0000', 'Approved\u202e devorppA', 'a\u200bb', 'x\uD800y']) {
      const answer = readPasAnswer({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: 'invalid', details: { text } }],
      });
      expect(answer).toEqual({
        kind: 'refused',
        issues: [{ severity: 'error', code: 'invalid', details: null, expression: [] }],
      });
    }
  });

  it('is a refusal even with no issue in form (the payer refused; it did not say why)', () => {
    expect(readPasAnswer({ resourceType: 'OperationOutcome' })).toEqual({ kind: 'refused', issues: [] });
    expect(readPasAnswer({ ...InvalidRequestResponse, issue: [{ severity: 'bad', code: 'invalid' }] })).toEqual({
      kind: 'refused',
      issues: [],
    });
  });
});
