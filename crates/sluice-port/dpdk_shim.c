/* The DPDK calls Sluice's DPDK ports make, as plain functions: DPDK's
 * burst calls and mbuf accessors are static inline, so Rust cannot call
 * them itself. Every function returns a negative errno on failure. Frames
 * are copied between mbufs and Sluice's pool (rx: mbuf -> pool, here the
 * data pointers are handed out; tx: pool -> fresh mbufs, here). */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

int sluice_dpdk_init(int argc, char **argv) {
    int rc = rte_eal_init(argc, argv);
    return rc < 0 ? -rte_errno : 0;
}

const char *sluice_dpdk_strerror(int error) { return rte_strerror(error); }

/* The port of device `name`, probing `devargs` first (a virtual device
 * such as "net_ring0" or "net_pcap0,rx_pcap=in.pcap") when no port has
 * that name yet. */
int sluice_dpdk_find(const char *name, const char *devargs, uint16_t *port) {
    if (rte_eth_dev_get_port_by_name(name, port) == 0) return 0;
    if (strncmp(name, "net_", 4) == 0) {
        int rc = rte_vdev_init(name, strchr(devargs, ',') ? strchr(devargs, ',') + 1 : "");
        if (rc < 0) return rc;
        return rte_eth_dev_get_port_by_name(name, port);
    }
    return -ENODEV;
}

/* Queues the device can have each way (the fewer of its receive and
 * transmit maximums), or a negative errno. */
int sluice_dpdk_max_queues(uint16_t port) {
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc < 0) return rc;
    return info.max_rx_queues < info.max_tx_queues ? info.max_rx_queues : info.max_tx_queues;
}

/* Configures `port` with `queues` receive and transmit queues of `descs`
 * descriptors each (several: spread by RSS over the IP addresses and
 * ports where the device hashes), receive buffers from a new pool of
 * `mbufs`, and starts it. The pool (also the source of transmit mbufs)
 * is returned in `*pool`. */
int sluice_dpdk_start(uint16_t port, uint16_t queues, uint16_t descs, unsigned mbufs, void **pool) {
    /* A name of its own each start: a pool a failed start had to keep does not block the next. */
    static unsigned starts;
    char name[RTE_MEMPOOL_NAMESIZE];
    snprintf(name, sizeof(name), "sluice%u_%u", port, __atomic_fetch_add(&starts, 1, __ATOMIC_RELAXED));
    struct rte_mempool *mp = rte_pktmbuf_pool_create(name, mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_eth_dev_socket_id(port));
    if (mp == NULL) return -rte_errno;
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc < 0) goto fail;
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    uint64_t hashed = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP);
    if (queues > 1 && hashed != 0) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = hashed;
    }
    rc = rte_eth_dev_configure(port, queues, queues, &conf);
    if (rc < 0) goto fail;
    uint16_t nb_rx = descs, nb_tx = descs;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rx, &nb_tx);
    if (rc < 0) goto fail;
    for (uint16_t q = 0; q < queues; q++) {
        rc = rte_eth_rx_queue_setup(port, q, nb_rx, rte_eth_dev_socket_id(port), NULL, mp);
        if (rc < 0) goto kept;
        rc = rte_eth_tx_queue_setup(port, q, nb_tx, rte_eth_dev_socket_id(port), NULL);
        if (rc < 0) goto kept;
    }
    rc = rte_eth_dev_start(port);
    if (rc < 0) goto kept;
    rte_eth_promiscuous_enable(port);
    *pool = mp;
    return 0;
fail:
    /* No queue took the pool yet: it goes. */
    rte_mempool_free(mp);
kept:
    /* Once a receive queue holds the pool, it stays (a driver may free
     * mbufs into it when the queue is set up again or released). */
    return rc;
}

/* Stops `port` and frees `pool`; a virtual device is removed, so that a
 * later pipeline of the process can create it again. */
void sluice_dpdk_stop(uint16_t port, const char *name, void *pool) {
    rte_eth_dev_stop(port);
    if (strncmp(name, "net_", 4) == 0)
        rte_vdev_uninit(name);
    else
        rte_eth_dev_close(port);
    rte_mempool_free(pool);
}

/* Gives the calling thread an lcore of its own if it has none (a thread
 * the EAL did not start), so that mempools serve it from a per-lcore cache
 * rather than their shared ring: 1 if it registered the thread (to leave at
 * its exit), 0 if the thread had an lcore, a negative errno if none was free. */
int sluice_dpdk_thread_join(void) {
    if (rte_lcore_id() != LCORE_ID_ANY) return 0;
    return rte_thread_register() == 0 ? 1 : -rte_errno;
}

static void flush_own_cache(struct rte_mempool *mp, void *arg) {
    (void)arg;
    struct rte_mempool_cache *cache = rte_mempool_default_cache(mp, rte_lcore_id());
    if (cache != NULL) rte_mempool_cache_flush(cache, mp);
}

/* Returns the mbufs the calling thread's lcore caches to their mempools and
 * releases the lcore `sluice_dpdk_thread_join` gave it. */
void sluice_dpdk_thread_leave(void) {
    rte_mempool_walk(flush_own_cache, NULL);
    rte_thread_unregister();
}

/* Receives up to `n` frames from `queue`: their mbufs, data and lengths. */
uint16_t sluice_dpdk_rx(uint16_t port, uint16_t queue, struct rte_mbuf **mbufs, const uint8_t **data, uint16_t *lens, uint16_t n) {
    uint16_t got = rte_eth_rx_burst(port, queue, mbufs, n);
    for (uint16_t i = 0; i < got; i++) {
        data[i] = rte_pktmbuf_mtod(mbufs[i], const uint8_t *);
        /* A frame in several segments does not fit one pool buffer: UINT16_MAX says so. */
        lens[i] = mbufs[i]->nb_segs == 1 ? rte_pktmbuf_data_len(mbufs[i]) : UINT16_MAX;
    }
    return got;
}

void sluice_dpdk_free(struct rte_mbuf **mbufs, uint16_t n) { rte_pktmbuf_free_bulk(mbufs, n); }

/* Copies `n` frames into fresh mbufs of `pool` and transmits them on
 * `queue`; returns how many the device took (the rest are freed here). */
int sluice_dpdk_tx(uint16_t port, uint16_t queue, void *pool, const uint8_t *const *frames, const uint16_t *lens, uint16_t n) {
    struct rte_mbuf *mbufs[512];
    if (n > 512) n = 512;
    if (rte_pktmbuf_alloc_bulk(pool, mbufs, n) != 0) return -ENOBUFS;
    for (uint16_t i = 0; i < n; i++) {
        char *dst = rte_pktmbuf_append(mbufs[i], lens[i]);
        if (dst == NULL) {
            rte_pktmbuf_free_bulk(mbufs, n);
            return -EMSGSIZE;
        }
        memcpy(dst, frames[i], lens[i]);
    }
    uint16_t sent = rte_eth_tx_burst(port, queue, mbufs, n);
    if (sent < n) rte_pktmbuf_free_bulk(mbufs + sent, n - sent);
    return sent;
}

/* The device's counters: received, sent, bytes each way, missed at a full
 * receive queue, receive errors, transmit errors, receive buffer failures. */
int sluice_dpdk_stats(uint16_t port, uint64_t out[8]) {
    struct rte_eth_stats s;
    int rc = rte_eth_stats_get(port, &s);
    if (rc < 0) return rc;
    uint64_t v[8] = {s.ipackets, s.opackets, s.ibytes, s.obytes, s.imissed, s.ierrors, s.oerrors, s.rx_nombuf};
    memcpy(out, v, sizeof(v));
    return 0;
}

/* DPDK's own forwarding loop, to compare with Sluice's: bursts of up to
 * `burst` frames from `rx` straight onto `tx`, no copies, for `seconds`;
 * frames forwarded and frames the transmit queue refused (freed). */
void sluice_dpdk_forward_bare(uint16_t rx, uint16_t tx, uint16_t burst, double seconds, uint64_t *forwarded, uint64_t *refused) {
    struct rte_mbuf *mbufs[512];
    if (burst > 512) burst = 512;
    uint64_t until = rte_get_timer_cycles() + (uint64_t)(seconds * (double)rte_get_timer_hz());
    uint64_t sent = 0, full = 0;
    while (rte_get_timer_cycles() < until) {
        uint16_t n = rte_eth_rx_burst(rx, 0, mbufs, burst);
        uint16_t took = rte_eth_tx_burst(tx, 0, mbufs, n);
        if (took < n) rte_pktmbuf_free_bulk(mbufs + took, n - took);
        sent += took;
        full += n - took;
    }
    *forwarded = sent;
    *refused = full;
}
