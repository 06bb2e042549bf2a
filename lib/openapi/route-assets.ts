import { existsSync, readFileSync } from 'node:fs';
import { routes } from '#lib/routes/route-table';

/**
 * A file a route's function reads at run time (the row's `assets`). In a Lambda bundle it lies
 * beside the bundle; from the sources (local stack, tests) it is read where the row says, from the
 * project root.
 */
export const readRouteAsset = (fileName: string): string => {
  const beside = new URL(`./${fileName}`, import.meta.url);
  if (existsSync(beside)) return readFileSync(beside, 'utf8');
  const source = routes.find((route) => route.assets?.[fileName])?.assets?.[fileName];
  if (!source) throw new Error(`No route ships ${fileName}`);
  return readFileSync(new URL(`../../${source}`, import.meta.url), 'utf8');
};
