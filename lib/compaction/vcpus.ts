/** What CPU this process has: the machine's, or on Lambda what its memory buys. */
import { availableParallelism } from 'node:os';

/** Memory per vCPU on Lambda (its documented 1,769 MB = one vCPU). */
const LAMBDA_MB_PER_VCPU = 1769;

/** The vCPUs this process may use: os.availableParallelism(), on Lambda at most its memory ÷ 1,769 MB (rounded, at least 1). */
export function vcpus(): number {
  const cpus = availableParallelism();
  const lambdaMb = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  return Number.isFinite(lambdaMb) && lambdaMb > 0 ? Math.min(cpus, lambdaVcpus(lambdaMb)) : cpus;
}

/** The vCPUs Lambda gives a function of `memoryMb` (one per 1,769 MB, rounded, at least 1). */
export function lambdaVcpus(memoryMb: number): number {
  return Math.max(1, Math.round(memoryMb / LAMBDA_MB_PER_VCPU));
}
