/*
 * The layers of docs/architecture.md as rules, checked by `npm run lint:deps` (part of `npm test`).
 * The doc's table "Layers and the imports they may make" mirrors this file: change both together.
 * Type-only imports count like any other (tsPreCompilationDeps).
 */
const DOMAINS =
  '^lib/(attachments|events|portal-accounts|rechecks|requests|runs|portal|payer-api|payer-endpoints|payer-connections|tenancy|webhooks)/';
const OUTSIDE_LIB = '^(functions|local|test|scripts|infra|bench)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module reaches itself through its imports.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'portal-channel-not-payer-api',
      severity: 'error',
      comment: 'The portal channel (browser, drivers, leases) never imports the payer-API channel.',
      from: { path: '^lib/portal/' },
      to: { path: '^lib/payer-api/' },
    },
    {
      name: 'payer-api-channel-not-portal',
      severity: 'error',
      comment: 'The payer-API channel (PAS mapping, SMART client, inquiry) never imports the portal channel.',
      from: { path: '^lib/payer-api/' },
      to: { path: '^lib/portal/' },
    },
    {
      name: 'run-core-through-channel-choice',
      severity: 'error',
      comment:
        'The run core (lib/runs/) reaches a channel only through the channel choice and its wirings (*-service.ts): the choice lives in one module.',
      from: { path: '^lib/runs/', pathNot: ['^lib/runs/channel-choice\\.ts$', '^lib/runs/[a-z-]+-service\\.ts$'] },
      to: { path: '^lib/(portal|payer-api)/' },
    },
    {
      name: 'lib-not-above',
      severity: 'error',
      comment: 'Nothing in lib/ imports handlers, the local stack, tests, scripts, infra or benches.',
      from: { path: '^lib/' },
      to: { path: OUTSIDE_LIB },
    },
    {
      name: 'local-only-for-tools',
      severity: 'error',
      comment: 'local/ (the local stack) is imported by tests, scripts and benches only.',
      from: { path: '^(functions|lib|infra)/' },
      to: { path: '^local/' },
    },
    {
      name: 'functions-thin',
      severity: 'error',
      comment: 'A handler reaches AWS through a ready service, never through SDK clients or commands.',
      from: { path: '^functions/' },
      to: { path: ['^lib/aws/', '^node_modules/@aws-sdk/'] },
    },
    {
      name: 'functions-through-services',
      severity: 'error',
      comment: "A handler calls its domain's ready service (service.ts), never an adapter of a port.",
      from: { path: '^functions/' },
      to: { path: `${DOMAINS}(dynamo|s3|sfn|lambda)-` },
    },
    {
      name: 'functions-not-each-other',
      severity: 'error',
      comment: 'A handler does not import another handler.',
      from: { path: '^functions/' },
      to: { path: '^functions/', pathNot: '^$0$' },
    },
    {
      name: 'routes-table-only',
      severity: 'error',
      comment:
        'The route table is data: it imports the table names (lib/table.ts), the Task names of the state machines and nothing else of ours.',
      from: { path: '^lib/routes/' },
      to: {
        path: '^(lib|functions|local|infra)/',
        pathNot: ['^lib/routes/', '^lib/table\\.ts$', '^lib/(runs/state-machines|rechecks/state-machine)\\.ts$'],
      },
    },
    {
      name: 'domains-not-routes',
      severity: 'error',
      comment: 'Domains do not read the route table: the state machines own their Task names, the tables import them.',
      from: { path: DOMAINS },
      to: { path: '^lib/routes/' },
    },
    {
      name: 'domains-not-edge',
      severity: 'error',
      comment: 'Domains know nothing of HTTP, Lambda events or the OpenAPI document.',
      from: { path: DOMAINS },
      to: { path: ['^lib/http/', '^node_modules/@types/aws-lambda/'] },
    },
    {
      name: 'domains-not-openapi',
      severity: 'error',
      comment:
        'Domains do not import the OpenAPI document (lib/openapi/schema-builders.ts, plain JSON Schema helpers, aside).',
      from: { path: DOMAINS },
      to: { path: '^lib/openapi/', pathNot: '^lib/openapi/schema-builders\\.ts$' },
    },
    {
      name: 'entities-below-domains',
      severity: 'error',
      comment:
        'An entity declaration imports lib/table.ts and lib/table-shards.ts (the key layout), other declarations (and their codecs) and the stored form of a sealed secret only.',
      from: { path: '^lib/entities/' },
      to: {
        path: '^lib/',
        pathNot: ['^lib/table\\.ts$', '^lib/table-shards\\.ts$', '^lib/entities/', '^lib/crypto/sealed-secret\\.ts$'],
      },
    },
    {
      name: 'foundations-import-nothing',
      severity: 'error',
      comment: 'errors, concurrency, cursors and ids import nothing of ours but lib/errors.ts.',
      from: { path: '^lib/(errors\\.ts|concurrency\\.ts|ids\\.ts|pagination/)' },
      to: { path: '^lib/', pathNot: '^lib/errors\\.ts$' },
    },
    {
      name: 'config-imports-nothing',
      severity: 'error',
      comment: 'The configuration (the one reader of process.env in lib/) imports nothing of ours outside lib/config/.',
      from: { path: '^lib/config/' },
      to: { path: '^lib/', pathNot: '^lib/config/' },
    },
    {
      name: 'aws-below-domains',
      severity: 'error',
      comment:
        'SDK clients and write helpers: lib/config/, lib/concurrency.ts, the tracer, the table layout and the shard merge (pure) only.',
      from: { path: '^lib/aws/' },
      to: {
        path: '^lib/',
        pathNot: [
          '^lib/aws/',
          '^lib/table\\.ts$',
          '^lib/shard-merge\\.ts$',
          '^lib/config/',
          '^lib/concurrency\\.ts$',
          '^lib/errors\\.ts$',
          '^lib/observability/tracer\\.ts$',
        ],
      },
    },
    {
      name: 'crypto-below-domains',
      severity: 'error',
      comment: 'Envelope encryption: lib/aws/ and lib/config/ only.',
      from: { path: '^lib/crypto/' },
      to: { path: '^lib/', pathNot: ['^lib/crypto/', '^lib/aws/', '^lib/config/'] },
    },
    {
      name: 'observability-below-edge',
      severity: 'error',
      comment: 'Logs, metrics, traces: the route table (for names) and nothing above it; no Lambda event types.',
      from: { path: '^lib/observability/' },
      to: {
        path: ['^lib/', '^node_modules/@types/aws-lambda/'],
        pathNot: ['^lib/observability/', '^lib/routes/route-table\\.ts$', '^lib/config/'],
      },
    },
    {
      name: 'audit-below-edge',
      severity: 'error',
      comment: 'The audit trail writer: lib/observability/ only.',
      from: { path: '^lib/audit/' },
      to: { path: '^lib/', pathNot: ['^lib/audit/', '^lib/observability/', '^lib/config/'] },
    },
    {
      name: 'validation-below-domains',
      severity: 'error',
      comment:
        'Validators and the JSON parser: lib/errors.ts only. The schema sources (lib/validation/schemas/, compiled at build time) may read domain constants.',
      from: { path: '^lib/(validation|json)/', pathNot: '^lib/validation/schemas/' },
      to: { path: '^lib/', pathNot: ['^lib/(validation|json)/', '^lib/errors\\.ts$'] },
    },
    {
      name: 'schema-sources-not-edge',
      severity: 'error',
      comment: 'Schema sources read constants of the domains, never the edge or the document.',
      from: { path: '^lib/validation/schemas/' },
      to: { path: ['^lib/http/', '^lib/openapi/'] },
    },
    {
      name: 'openapi-not-stack',
      severity: 'error',
      comment: "The OpenAPI document reads the edge's names (headers, patterns), never its Middy stack.",
      from: { path: '^lib/openapi/' },
      to: { path: ['^lib/http/endpoint\\.ts$', '^node_modules/@middy/'] },
    },
    {
      name: 'infra-reads-names',
      severity: 'error',
      comment:
        'The CDK app reads the route table and the names and constants it deploys; never handlers, services, adapters or SDK clients.',
      from: { path: '^infra/' },
      to: {
        path: '^(lib|functions)/',
        pathNot: [
          '^lib/routes/',
          '^lib/table\\.ts$',
          // The client item's attribute names: the settings a worker role may read from the client's own partition.
          '^lib/entities/tenancy\\.ts$',
          '^lib/config/defaults\\.ts$',
          '^lib/object-keys\\.ts$',
          '^lib/http/(gateway-responses|response)\\.ts$',
          '^lib/audit/audit-record\\.ts$',
          '^lib/observability/names\\.ts$',
          '^lib/events/bus-event\\.ts$',
          '^lib/entities/service-event\\.ts$',
          '^lib/(runs/state-machines|rechecks/state-machine)\\.ts$',
          '^lib/(portal-accounts/credentials|webhooks/signing-secrets)\\.ts$',
          '^lib/payer-api/signing-keys/kms-key-tags\\.ts$',
        ],
      },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: '^node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|\\.local)/|/generated/' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
