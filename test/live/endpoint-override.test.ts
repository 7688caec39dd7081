import {describe, expect, it} from 'vitest'
import {endpointOverride} from '../../src/live/preflight.js'

describe("the confirmation's word on where AWS calls go", () => {
  it("says nothing for AWS's own endpoints, names the flag, or the variables and their URLs", () => {
    expect(endpointOverride(undefined, {AWS_REGION: 'eu-west-1'})).toBeNull()
    expect(endpointOverride('http://127.0.0.1:5000', {})).toBe('the endpoint http://127.0.0.1:5000 (--endpoint-url)')
    expect(endpointOverride(undefined, {AWS_ENDPOINT_URL: 'http://localhost:4566'})).toBe(
      "the endpoint http://localhost:4566 (AWS_ENDPOINT_URL), not AWS's own",
    )
    expect(endpointOverride(undefined, {AWS_ENDPOINT_URL_ROUTE_53: 'http://a', AWS_ENDPOINT_URL_CLOUDWATCH: 'http://b'})).toBe(
      "the endpoints http://a, http://b (AWS_ENDPOINT_URL_ROUTE_53 and 1 more AWS_ENDPOINT_URL_* variables), not AWS's own",
    )
    // The SDK's own switch to ignore them: then they are not where the calls go.
    expect(endpointOverride(undefined, {AWS_ENDPOINT_URL: 'http://x', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true'})).toBeNull()
    expect(endpointOverride(undefined, {AWS_ENDPOINT_URL: ''})).toBeNull()
  })
})
