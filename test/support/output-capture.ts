import { vi } from 'vitest';

/**
 * Everything this process writes to stdout and stderr from now on, still passed through: what a
 * log-checking test greps (in-process handlers log through console/stdout).
 */
export const captureProcessOutput = () => {
  let text = '';
  const spies = [process.stdout, process.stderr].map((stream) => {
    const original = stream.write.bind(stream);
    return vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  });
  return {
    text: () => text,
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
};
