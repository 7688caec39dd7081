/**
 * The lengths of time the live tests give the sluice they spawn, so that none waits out a
 * production length: a lease or a call deadline lapses in seconds, not half a minute.
 */

/**
 * Spawned runs hold their locks by 3 s leases (renewed every second): a killed run's locks run
 * out within a test, and a live one renews often enough to be seen alive.
 */
export const LEASE = '3'

/**
 * The AWS call deadline for the tests that hang a call and wait for it to be given up: 5 s, so
 * 1.7 s per attempt (at least two attempts are held before the deadline), still well above what
 * moto takes to answer on a busy machine. Other live tests keep the 30 s default: a signal test
 * that proves a hung call is stopped within 5 s must not be rescued by the deadline.
 */
export const DEADLINE = '5'

/** The environment that gives a spawned sluice the test lease: the state fixture always, a live test when it asks. */
export const testLease = {SLUICE_LEASE_SECONDS: LEASE}

/** The environment that gives a spawned sluice the short call deadline. */
export const shortDeadline = {SLUICE_AWS_DEADLINE_SECONDS: DEADLINE}
