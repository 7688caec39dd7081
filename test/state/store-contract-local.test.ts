import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {LocalStore} from '../../src/local/local-store.js'
import {storeContract} from '../helpers/store-contract.js'

// The state store contract (test/helpers/store-contract.ts) on a local directory; the DynamoDB and
// S3 stores run the same suite on moto (test/aws/store-contract.test.ts).
storeContract('a local directory', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'sluice-contract-')), 'state')
  return {
    store: new LocalStore(dir),
    again: () => new LocalStore(dir),
    steal: async (record) => writeFileSync(join(dir, 'locks', `${record.resource.replace(/[^A-Za-z0-9._-]/g, '_')}.json`), JSON.stringify(record)),
  }
})
