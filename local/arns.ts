/** The local stand-ins' region, account and function ARNs: one spelling for Lambda, Step Functions and the re-check timer. */
export const REGION = 'us-east-1';
export const ACCOUNT = '000000000000';

export const functionArnOf = (name: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
