import { describe, expect, it } from 'vitest';
import { onLambda } from '#lib/config/runtime';
import { chromiumArgs, FORBIDDEN_ARGS } from '#lib/portal/browser';

/** What launchBrowser adds to playwright-core's switches (the real process's command line: rpa-origin-pinning.test.ts). */
describe('Chromium arguments', () => {
  const everywhere = [chromiumArgs({ singleProcess: false }), chromiumArgs({ singleProcess: true })];

  it('never turn off web security, site isolation or mixed-content blocking', () => {
    expect(FORBIDDEN_ARGS).toEqual([
      '--disable-web-security',
      '--disable-site-isolation-trials',
      '--allow-running-insecure-content',
    ]);
    for (const args of everywhere) {
      for (const forbidden of FORBIDDEN_ARGS) expect(args.some((arg) => arg.startsWith(forbidden))).toBe(false);
      // No feature list of ours either (it would replace Playwright's): IsolateOrigins and site-per-process stay on.
      expect(args.filter((arg) => /^--(disable|enable)-features/.test(arg))).toEqual([]);
      expect(args.join(' ')).not.toMatch(/IsolateOrigins|site-per-process|--no-sandbox|--ignore-certificate-errors/);
    }
  });

  it('run everything in one process only where Lambda needs it', () => {
    expect(chromiumArgs({ singleProcess: false })).not.toContain('--single-process');
    expect(chromiumArgs({ singleProcess: false })).not.toContain('--no-zygote');
    expect(chromiumArgs({ singleProcess: true })).toEqual(expect.arrayContaining(['--single-process', '--no-zygote']));
    expect(onLambda({ AWS_LAMBDA_FUNCTION_NAME: 'browser-worker' })).toBe(true);
    expect(onLambda({})).toBe(false);
  });

  it('keep WebRTC inside the proxy, WebGL out of pages, and pings off', () => {
    for (const args of everywhere) {
      expect(args).toEqual(
        expect.arrayContaining([
          '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
          '--disable-3d-apis',
          '--no-pings',
          '--use-angle=swiftshader',
        ]),
      );
    }
  });
});
