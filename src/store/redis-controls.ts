// A setControls patch as lua/setControls-2.lua takes it: field/value pairs over the meta
// fields of lua/includes/controls.lua, '' clearing a field.

import type { ControlsPatch } from '../types.js';

/** The patch's fields, in the script's encoding; a field left out of the patch is left out. */
export function encodeControlsPatch(p: ControlsPatch): Array<string | number> {
  const pairs: Array<string | number> = [];
  const put = (field: string, value: string | number | undefined) => {
    if (value !== undefined) pairs.push(field, value);
  };
  put('cm', p.mode);
  put('cx', p.message === null ? '' : p.message);
  put('cr', p.admitRatePerSecond === undefined ? undefined : p.admitRatePerSecond === null ? '' : String(p.admitRatePerSecond));
  put('cb', p.admitBurst);
  put('ca', p.maxActive === null ? -1 : p.maxActive);
  put('co', p.opensAt === null ? '' : p.opensAt);
  put('cs', p.shuffle === undefined ? undefined : p.shuffle ? '1' : '0');
  put('sk', p.stock === null ? '' : p.stock);
  put('sm', p.soldOutMessage === null ? '' : p.soldOutMessage);
  put('cn', p.safetyNet === undefined ? undefined : p.safetyNet ? '1' : '0');
  return pairs;
}
