/** Types of `cluster-key-slot` (an ioredis dependency without its own): the Redis Cluster slot of a key. */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
