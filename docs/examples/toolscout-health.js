// Active health checks of toolscout replicas for open-source nginx (njs), with toolscout-nginx.conf.
// Every check, each replica's /readyz is fetched: 200 puts it in, anything else (503 while it
// starts or drains, a refused connection, no answer in js_fetch_timeout) takes it out. New
// requests go round-robin to the replicas that are in, and to all of them while none is.

function replicas(s) {
    return s.variables.toolscout_replicas.split(/\s+/).filter((a) => a.length > 0);
}

async function probe(dict, address) {
    let up = 0;
    let why = "";
    try {
        const reply = await ngx.fetch(`http://${address}/readyz`);
        up = reply.status === 200 ? 1 : 0;
        why = `readyz ${reply.status}`;
    } catch (e) {
        why = `readyz failed: ${e.message}`;
    }
    if (dict.get(address) !== up) {
        ngx.log(ngx.WARN, `toolscout replica ${address} ${up ? "in" : "out"} (${why})`);
    }
    dict.set(address, up);
}

async function check(s) {
    const dict = ngx.shared.toolscout_health;
    await Promise.all(replicas(s).map((address) => probe(dict, address)));
}

function pick(r) {
    const all = replicas(r);
    const dict = ngx.shared.toolscout_health;
    const up = all.filter((address) => dict.get(address) === 1);
    const pool = up.length > 0 ? up : all;
    return pool[dict.incr("next", 1, 0) % pool.length];
}

export default { check, pick };
