import type { Express } from 'express';

interface Layer {
  name: string;
  regexp: RegExp & { fast_slash?: boolean };
  keys: { name: string }[];
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/**
 * The mount paths of a router layer, from the regular expression Express 4 keeps of them
 * (`^\/admin\/v1\/companies(?:\/([^/]+?))\/?(?=\/|$)`, alternatives for an array of paths).
 */
function mountPaths(layer: Layer): string[] {
  if (layer.regexp.fast_slash) return [''];
  let key = 0;
  return layer.regexp.source.split(/\|(?=\^)/).map((alt) =>
    alt
      .replace(/^\^/, '')
      .replace(/\\\/\?\(\?=\\\/\|\$\)$/, '')
      .replace(/\(\?:\\\/\(\[\^\/\]\+\?\)\)/g, () => `/:${layer.keys[key++]?.name ?? 'param'}`)
      .replace(/\\\//g, '/'),
  );
}

/** Every route an Express app serves, as `METHOD /path/:param`, routers included. */
export function listRoutes(app: Express): string[] {
  const out = new Set<string>();
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all'))
          for (const p of paths) out.add(`${method.toUpperCase()} ${prefix}${p}`);
      } else if (layer.name === 'router' && layer.handle.stack) {
        for (const mount of mountPaths(layer)) walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  walk((app as unknown as { _router?: { stack: Layer[] } })._router?.stack ?? [], '');
  return [...out].sort();
}
