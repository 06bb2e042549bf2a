import type { StateMachine } from 'aws-local-stepfunctions';
import { type HistoryEntry, json } from './model.ts';

/* The execution history: the library's events as Step Functions history events. */

type EventLog = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

/** An event's details without the execution's data (`includeExecutionData: false`). */
export const withoutData = (details: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(details).map(([key, value]) => {
      const { input: _input, output: _output, ...rest } = value as Record<string, unknown>;
      return [key, rest];
    }),
  );

/** A map iteration's event, under AWS's details key (e.g. `mapIterationStartedEventDetails`). */
const mapIterationEvent = (event: Extract<EventLog, { parentState: unknown; index: number }>, rank: number) => ({
  rank,
  type: event.type,
  details: {
    [`${event.type.charAt(0).toLowerCase()}${event.type.slice(1)}EventDetails`]: {
      name: event.parentState.name,
      index: event.index,
    },
  },
});

/** The library's events as Step Functions history events (AWS has no event for a retry or a catch). */
export const historyEventsOf = (event: EventLog, roleArn: string): HistoryEntry[] => {
  switch (event.type) {
    case 'ExecutionStarted':
      return [
        { rank: 0, type: event.type, details: { executionStartedEventDetails: { input: json(event.input), roleArn } } },
      ];
    case 'ExecutionSucceeded':
      return [
        { rank: 9, type: event.type, details: { executionSucceededEventDetails: { output: json(event.output) } } },
      ];
    case 'ExecutionFailed':
      return [
        {
          rank: 9,
          type: event.type,
          details: { executionFailedEventDetails: { error: event.Error, cause: String(event.Cause ?? '') } },
        },
      ];
    case 'ExecutionTimeout':
      return [{ rank: 9, type: 'ExecutionTimedOut', details: {} }];
    case 'ExecutionAborted':
      return [{ rank: 9, type: event.type, details: {} }];
    case 'StateEntered':
      return [
        {
          rank: 2,
          type: `${event.state.type}StateEntered`,
          details: { stateEnteredEventDetails: { name: event.state.name, input: json(event.state.input) } },
        },
      ];
    case 'StateExited':
      return [
        {
          rank: 6,
          type: `${event.state.type}StateExited`,
          details: { stateExitedEventDetails: { name: event.state.name, output: json(event.state.output) } },
        },
      ];
    case 'StateFailed':
      // A function's own failure is recorded where it is invoked; its timeout only shows here.
      if (event.state.type === 'Task' && event.Error === 'States.Timeout') {
        return [
          {
            rank: 5,
            type: 'LambdaFunctionTimedOut',
            details: { lambdaFunctionTimedOutEventDetails: { error: event.Error } },
          },
        ];
      }
      return event.state.type === 'Map' ? [{ rank: 5, type: 'MapStateFailed', details: {} }] : [];
    case 'MapIterationStarted':
      return [mapIterationEvent(event, 1)];
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
      return [mapIterationEvent(event, 7)];
    default:
      return [];
  }
};
