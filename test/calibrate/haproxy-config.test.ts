import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {backendCheckConfig} from '../../src/haproxy/check-config.js'
import {parseConfig, readConfig, seconds, wordsOf} from '../../src/haproxy/config-file.js'
import {configArguments, runningConfigPaths} from '../../src/haproxy/running-config.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {InputError} from '../../src/errors.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-config-'))
})
afterEach(() => rmSync(dir, {recursive: true, force: true}))

const config = (text: string) => parseConfig([{file: 'haproxy.cfg', text}])

describe("HAProxy's time units", () => {
  it('reads us, ms, s, m, h and d, and a bare number as milliseconds', () => {
    expect(['500us', '250ms', '3s', '2m', '1h', '1d', '1500'].map(seconds)).toEqual([0.0005, 0.25, 3, 120, 3600, 86400, 1.5])
  })

  it('is null for what is not a time', () => {
    expect(['', 's', '3 s', '-1s', '3sec'].map(seconds)).toEqual([null, null, null, null, null])
  })
})

describe('a configuration line', () => {
  it('is split on blanks, quotes kept together, a # outside quotes ending it', () => {
    expect(wordsOf('  server s1 127.0.0.1:80 check inter 2s # the first one')).toEqual(['server', 's1', '127.0.0.1:80', 'check', 'inter', '2s'])
    expect(wordsOf(`  http-check send hdr Host "a # b" meth 'GET'`)).toEqual(['http-check', 'send', 'hdr', 'Host', 'a # b', 'meth', 'GET'])
    expect(wordsOf('   # only a comment')).toEqual([])
  })
})

describe("a backend's check settings from the configuration", () => {
  it("takes the server line over the backend's default-server over the defaults section's", () => {
    const sections = config(`
defaults
  default-server inter 4s fall 5 rise 4 slowstart 30s error-limit 20
  timeout check 3s
  timeout server 40s
backend app
  default-server inter 500ms fall 2
  timeout server 25s
  server a 10.0.0.1:80 check rise 3
  server b 10.0.0.2:80 check rise 3 slowstart 1m
  server c 10.0.0.3:80 check
`)
    const c = backendCheckConfig(sections, 'app', ['a', 'b', 'c'], 'haproxy.cfg')
    expect(c).toMatchObject({inter: 0.5, fall: 2, rise: 3, slowstart: 30, errorLimit: 20, checkTimeout: 3, timeoutServer: 25, at: 'haproxy.cfg:6'})
    // fastinter and downinter follow inter when unset, as HAProxy has it.
    expect([c.fastinter, c.downinter]).toEqual([0.5, 0.5])
  })

  it("is HAProxy's defaults where nothing is set, the check timeout being inter and no server timeout", () => {
    const c = backendCheckConfig(config('backend app\n  server a 10.0.0.1:80 check\n'), 'app', ['a'], 'haproxy.cfg')
    expect(c).toEqual({
      inter: 2,
      fastinter: 2,
      downinter: 2,
      fall: 3,
      rise: 2,
      slowstart: 0,
      observe: 'none',
      errorLimit: 10,
      onError: 'fastinter',
      checkTimeout: 2,
      timeoutServer: null,
      at: 'haproxy.cfg:1',
    })
  })

  it('reads fastinter, downinter, observe and on-error', () => {
    const c = backendCheckConfig(
      config('backend app\n  default-server inter 1s fastinter 200ms downinter 5s observe layer7 error-limit 3 on-error mark-down\n  server a x:1\n'),
      'app',
      ['a'],
      'haproxy.cfg',
    )
    expect(c).toMatchObject({inter: 1, fastinter: 0.2, downinter: 5, observe: 'layer7', errorLimit: 3, onError: 'mark-down', checkTimeout: 1})
  })

  it('applies a defaults section to the sections after it only, and a named one to those that say from', () => {
    const sections = config(`
defaults
  timeout server 10s
backend early
  server a x:1
defaults
  timeout server 20s
  default-server inter 3s
defaults slow
  timeout server 90s
backend late
  server a x:1
backend picky from slow
  server a x:1
`)
    const server = (name: string) => backendCheckConfig(sections, name, ['a'], 'haproxy.cfg')
    expect([server('early').timeoutServer, server('late').timeoutServer, server('picky').timeoutServer]).toEqual([10, 90, 90])
    // `defaults slow` is the last one before late, so late inherits it, not the unnamed one before.
    expect(server('late').inter).toBe(2)
    expect(() => config('backend x from nowhere\n')).toThrow(InputError)
  })

  it('ends a backend at the next section, whatever its kind', () => {
    const sections = config('backend app\n  server a x:1 inter 1s\npeers mine\n  peer p1 10.0.0.9:1024\nresolvers dns\n  timeout check 9s\n')
    expect(backendCheckConfig(sections, 'app', ['a'], 'haproxy.cfg').checkTimeout).toBe(1)
  })

  it('describes servers that differ by the most common setting among those running, names from server-template included', () => {
    const sections = config(`
listen app
  bind :80
  server-template web 1-3 x:1 check inter 1s
  server odd x:2 check inter 9s
  server gone x:3 check inter 9s
`)
    expect(backendCheckConfig(sections, 'app', ['web1', 'web2', 'web3', 'odd'], 'haproxy.cfg').inter).toBe(1)
    expect(backendCheckConfig(sections, 'app', ['odd', 'gone', 'web1'], 'haproxy.cfg').inter).toBe(9)
  })

  it('says which file and line hold a value it cannot read, and when the backend is missing', () => {
    expect(() => backendCheckConfig(config('backend app\n  server a x:1 inter 2sec\n'), 'app', ['a'], 'haproxy.cfg')).toThrow(
      /^haproxy\.cfg:2: inter 2sec is not a time HAProxy reads/,
    )
    expect(() => backendCheckConfig(config('frontend app\n'), 'app', [], 'haproxy.cfg')).toThrow(/^haproxy\.cfg has no backend or listen section named app$/)
  })

  it("reads a directory's *.cfg files in lexical order as one configuration, other files skipped", () => {
    const conf = join(dir, 'conf.d')
    mkdirSync(conf)
    writeFileSync(join(conf, '20-app.cfg'), 'backend app\n  server a x:1 check\n')
    writeFileSync(join(conf, '10-defaults.cfg'), 'defaults\n  default-server inter 7s\n  timeout server 12s\n')
    writeFileSync(join(conf, '30-notes.txt'), 'defaults\n  default-server inter 1s\n')
    writeFileSync(join(conf, '40-late.cfg'), 'defaults\n  default-server inter 1s\n')
    const c = backendCheckConfig(readConfig([conf]), 'app', ['a'], conf)
    expect(c).toMatchObject({inter: 7, timeoutServer: 12, at: `${join(conf, '20-app.cfg')}:1`})
  })
})

describe("the running HAProxy's configuration", () => {
  it('is every -f argument and those after --, relative ones from -C', () => {
    expect(configArguments(['-f', '/etc/haproxy/haproxy.cfg', '-db', '-f', 'conf.d', '-p', 'x.pid'])).toEqual({files: ['/etc/haproxy/haproxy.cfg', 'conf.d']})
    expect(configArguments(['-C', '/srv', '-W', '--', 'a.cfg', 'b.cfg'])).toEqual({files: ['a.cfg', 'b.cfg'], chdir: '/srv'})
  })

  /** A HAProxy process as /proc shows it, and a Runtime API whose `show info` names its pid. */
  function fakeProcess(pid: number, argv: string[], cwd: string): RuntimeApi {
    mkdirSync(join(dir, 'proc', String(pid)), {recursive: true})
    writeFileSync(join(dir, 'proc', String(pid), 'cmdline'), argv.join('\0') + '\0')
    symlinkSync(cwd, join(dir, 'proc', String(pid), 'cwd'))
    const api = new RuntimeApi(join(dir, 'admin.sock'))
    api.send = (command) => Promise.resolve(command === 'show info' ? `Name: HAProxy\nVersion: 2.6.12\nPid: ${pid}\nUptime_sec: 3\n` : '')
    return api
  }

  it('is read from its command line in /proc, relative paths from its working directory', async () => {
    const api = fakeProcess(4242, ['/usr/sbin/haproxy', '-W', '-f', '/etc/haproxy/haproxy.cfg', '-f', 'extra.d', '-p', '/run/haproxy.pid'], '/srv/lb')
    expect(await runningConfigPaths(api, undefined, join(dir, 'proc'))).toEqual(['/etc/haproxy/haproxy.cfg', '/srv/lb/extra.d'])
  })

  it('cannot be found over TCP, for a process that is not HAProxy, or without -f, and says to pass --haproxy-config', async () => {
    const tcp = new RuntimeApi('127.0.0.1:9999')
    await expect(runningConfigPaths(tcp, undefined, join(dir, 'proc'))).rejects.toThrow(/TCP socket.*--haproxy-config FILE$/)
    const other = fakeProcess(7, ['/usr/bin/python3', '-f', 'x.cfg'], '/')
    await expect(runningConfigPaths(other, undefined, join(dir, 'proc'))).rejects.toThrow(/process 7 here is \/usr\/bin\/python3, not HAProxy/)
    rmSync(join(dir, 'proc'), {recursive: true})
    const bare = fakeProcess(8, ['haproxy', '-db'], '/')
    await expect(runningConfigPaths(bare, undefined, join(dir, 'proc'))).rejects.toThrow(InputError)
    const gone = new RuntimeApi(join(dir, 'admin.sock'))
    gone.send = () => Promise.resolve('Pid: 99999\n')
    await expect(runningConfigPaths(gone, undefined, join(dir, 'proc'))).rejects.toThrow(/its process 99999 cannot be read here/)
  })
})
