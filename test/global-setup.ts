import type {TestProject} from 'vitest/node'
import {startMoto} from './aws/moto.js'

// One server for the whole run: starting moto costs about a second, and test files in parallel
// workers share it, so they seed uniquely named resources rather than calling resetMoto.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Workers inherit this; on Node 20 every SDK client would otherwise print a Node 22 deprecation warning.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  const moto = await startMoto()
  project.provide('motoEndpoint', moto.endpoint)
  return moto.stop
}
