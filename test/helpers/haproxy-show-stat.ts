/**
 * What HAProxy 2.6.12 (Debian 12's package) answered to `show stat app 2 -1` and `show stat app 4 -1`
 * for a backend `app` of three servers checked with `inter 500ms fall 2 rise 3`, after ten requests:
 * the header and rows exactly as captured, for tests that feed the readings canned answers. Tests
 * change cells by column name, so the column order stays HAProxy's own.
 */
export const showStatHeader =
  '# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,hrsp_other,hanafail,req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,comp_in,comp_out,comp_byp,comp_rsp,lastsess,last_chk,last_agt,qtime,ctime,rtime,ttime,agent_status,agent_code,agent_duration,check_desc,agent_desc,check_rise,check_fall,check_health,agent_rise,agent_fall,agent_health,addr,cookie,mode,algo,conn_rate,conn_rate_max,conn_tot,intercepted,dcon,dses,wrew,connect,reuse,cache_lookups,cache_hits,srv_icur,src_ilim,qtime_max,ctime_max,rtime_max,ttime_max,eint,idle_conn_cur,safe_conn_cur,used_conn_cur,need_conn_est,uweight,agg_server_status,agg_server_check_status,agg_check_status,-,ssl_sess,ssl_reused_sess,ssl_failed_handshake,h2_headers_rcvd,h2_data_rcvd,h2_settings_rcvd,h2_rst_stream_rcvd,h2_goaway_rcvd,h2_detected_conn_protocol_errors,h2_detected_strm_protocol_errors,h2_rst_stream_resp,h2_goaway_resp,h2_open_connections,h2_backend_open_streams,h2_total_connections,h2_backend_total_streams,h1_open_connections,h1_open_streams,h1_total_connections,h1_total_streams,h1_bytes_in,h1_bytes_out,h1_spliced_bytes_in,h1_spliced_bytes_out,'

export const capturedBackendRow =
  'app,BACKEND,0,0,0,1,999,10,820,1030,0,0,,0,0,0,0,UP,2,2,0,,0,4,0,,1,3,0,,10,,1,10,,10,,,,0,10,0,0,0,0,,,,10,0,0,0,0,0,0,0,,,0,0,1,1,,,,,,,,,,,,,,http,roundrobin,,,,,,,0,10,0,0,0,,,0,0,1,1,0,,,,,2,0,0,0,-,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,0,33,33,3144,1342,0,0,'

export const capturedServerRow =
  'app,s1,0,0,0,1,,5,410,515,,0,,0,0,0,0,UP,1,1,0,0,0,5,0,,1,3,1,,5,,2,4,,5,L7OK,200,0,0,5,0,0,0,0,,,,5,0,0,,,,,1,,,0,0,1,1,,,,Layer7 check passed,,3,2,4,,,,127.0.0.1:18081,,http,,,,,,,,0,5,0,,,1,,0,0,1,1,0,1,0,0,1,1,,,,-,0,0,0,,,,,,,,,,,,,,,,,,,,,,'

const columns = showStatHeader.replace(/^#\s*/, '').split(',')

/** The captured row with some cells changed, by column name. */
export function statRow(captured: string, cells: Record<string, string | number>): string {
  const values = captured.split(',')
  for (const [name, value] of Object.entries(cells)) {
    const at = columns.indexOf(name)
    if (at < 0) throw new Error(`show stat has no column ${name}`)
    values[at] = String(value)
  }
  return values.join(',')
}

/** A whole `show stat` answer: the header, the rows, and the blank line HAProxy ends it with. */
export function showStat(rows: string[]): string {
  return `${showStatHeader}\n${rows.join('\n')}\n\n`
}
