// The package version, given as the instrumentation scope's version of the default meter.

/**
 * waitgate's version. Written by hand (a bundled JSON import or a runtime read of
 * package.json breaks under bundlers); test/opentelemetry/version.test.ts fails when
 * it differs from package.json.
 */
export const VERSION = '0.1.0';
