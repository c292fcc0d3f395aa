// Spawns throwaway redis-server processes on free ports, for tests that own (and may kill) their server.
// The logic lives in scripts/redis-server.mjs, shared with the bench; this file keeps the tests' import path.

export { answersPing, freePort, hasRedisServerBinary, startRedisServer, type RedisServer } from '../../scripts/redis-server.mjs';
