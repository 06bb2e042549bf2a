import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';
import { localEnvironment, setFunctionEnvironment } from './config.ts';

/**
 * Lambda's invocation context for the functions the local stack runs. On Lambda a process runs one
 * invocation at a time, so the Powertools Logger's Lambda context and keys (one per process) are that
 * invocation's. The local stack runs every function in one process, many at once, which is what Lambda
 * Managed Instances do with one execution environment: their runtime sets AWS_LAMBDA_MAX_CONCURRENCY
 * and runs each invocation in a context of its own in the InvokeStore (AsyncLocalStorage), where the
 * Logger then keeps that invocation's context and keys. The local stack does the same, so each line
 * carries its own function's name, request id and keys, never another invocation's.
 */

/** Only its presence matters here: the InvokeStore and Powertools test for it. */
const MAX_CONCURRENCY = '64';

let store: InvokeStoreBase | undefined;

/**
 * Turns invocation contexts on for this process: before any AWS SDK request, whose middleware makes
 * the process's one InvokeStore (without the variable, a store with one context for everything).
 */
export const enableInvocationContexts = async () => {
  if (!localEnvironment().AWS_LAMBDA_MAX_CONCURRENCY)
    setFunctionEnvironment({ AWS_LAMBDA_MAX_CONCURRENCY: MAX_CONCURRENCY });
  const instance = await InvokeStore.getInstanceAsync(true);
  // A store made earlier keeps what one context set for everyone: refuse it rather than mix lines.
  const probe = Symbol('probe');
  instance.run({ [probe]: true }, () => undefined);
  if (instance.get(probe)) {
    throw new Error('Invocation contexts must be turned on before the first AWS SDK request of the process.');
  }
  store = instance;
};

type Handler<E, R> = (event: E, context: Context) => Promise<R>;

/** Which handler an invocation runs (its module under functions/, e.g. `rpa/fill-portal-form`): its role on AWS. */
const HANDLER = Symbol('handler');

/**
 * `handler`, each call of it an invocation of its own, named by its Lambda context's request id, as the
 * runtime starts one, and knowing which handler it is (`module`); called as is where contexts are not turned on.
 */
export const ownInvocation =
  <E, R>(handler: Handler<E, R>, module?: string): Handler<E, R> =>
  (event, context) =>
    store
      ? store.run(
          {
            [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId,
            ...(module ? { [HANDLER]: module } : {}),
          },
          () => handler(event, context),
        )
      : handler(event, context);

/** The handler whose invocation this code runs in; undefined outside one (the relay, a test's own calls). */
export const currentHandler = (): string | undefined => store?.get<string>(HANDLER);
