/**
 * Whether a process with this id is running on this machine. EPERM means it runs
 * as another user: alive all the same.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
