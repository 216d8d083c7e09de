/* A thin C shim over DPDK's lookup libraries (rte_lpm, rte_lpm6, rte_hash, rte_acl),
 * built only for Sluice's lookup benchmark. Every function returns NULL or
 * a negative value on failure; rte_errno says why. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_hash_crc.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_memzone.h>

int shim_eal_init(void) {
    char *argv[] = {"sluice-bench", "--no-huge", "--no-pci", "--no-shconf", "-m", "2048",
                    "--log-level=lib.*:error", "-l", "0", NULL};
    int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
    return rte_eal_init(argc, argv);
}

int shim_errno(void) { return rte_errno; }

/* A fresh object name per table: DPDK refuses two objects of one name. */
static const char *fresh_name(const char *kind) {
    static char name[RTE_MEMZONE_NAMESIZE];
    static unsigned serial;
    snprintf(name, sizeof(name), "sluice_%s_%u", kind, serial++);
    return name;
}

/* LPM: routes (prefix, depth, next hop) in host byte order. */
void *shim_lpm_create(const uint32_t *prefixes, const uint8_t *depths, const uint32_t *hops, int n) {
    struct rte_lpm_config config = {.max_rules = (uint32_t)n + 16, .number_tbl8s = 1 << 12, .flags = 0};
    struct rte_lpm *lpm = rte_lpm_create(fresh_name("lpm"), 0, &config);
    if (lpm == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        if (rte_lpm_add(lpm, prefixes[i], depths[i], hops[i]) < 0) {
            rte_lpm_free(lpm);
            return NULL;
        }
    }
    return lpm;
}

int shim_lpm_lookup(void *lpm, uint32_t ip, uint32_t *hop) { return rte_lpm_lookup(lpm, ip, hop); }

int shim_lpm_lookup_bulk(void *lpm, const uint32_t *ips, uint32_t *hops, unsigned n) {
    return rte_lpm_lookup_bulk(lpm, ips, hops, n);
}

/* LPM6: routes (16-byte prefix, depth 1..=128, next hop); `tbl8s` groups of 256 entries. */
void *shim_lpm6_create(const uint8_t (*prefixes)[16], const uint8_t *depths, const uint32_t *hops, int n, uint32_t tbl8s) {
    struct rte_lpm6_config config = {.max_rules = (uint32_t)n + 16, .number_tbl8s = tbl8s, .flags = 0};
    struct rte_lpm6 *lpm = rte_lpm6_create(fresh_name("lpm6"), 0, &config);
    if (lpm == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        if (rte_lpm6_add(lpm, prefixes[i], depths[i], hops[i]) < 0) {
            rte_lpm6_free(lpm);
            return NULL;
        }
    }
    return lpm;
}

int shim_lpm6_lookup(void *lpm, const uint8_t *ip, uint32_t *hop) { return rte_lpm6_lookup(lpm, ip, hop); }

/* Next hops of `n` addresses; -1 where none matches. */
int shim_lpm6_lookup_bulk(void *lpm, uint8_t (*ips)[16], int32_t *hops, unsigned n) {
    return rte_lpm6_lookup_bulk_func(lpm, ips, hops, n);
}

/* Exact match on 4-byte keys (an IPv4 address), CRC hash as DPDK apps use it. */
void *shim_hash_create(const uint32_t *keys, int n) {
    struct rte_hash_parameters params = {
        .name = fresh_name("hash"), .entries = (uint32_t)(2 * n + 64), .key_len = sizeof(uint32_t),
        .hash_func = rte_hash_crc, .hash_func_init_val = 0, .socket_id = 0,
    };
    struct rte_hash *h = rte_hash_create(&params);
    if (h == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        if (rte_hash_add_key_data(h, &keys[i], (void *)(uintptr_t)(i + 1)) < 0) {
            rte_hash_free(h);
            return NULL;
        }
    }
    return h;
}

/* The entry's data (1-based index), or 0 when the key is absent. */
uint32_t shim_hash_lookup(void *h, uint32_t key) {
    void *data;
    return rte_hash_lookup_data(h, &key, &data) < 0 ? 0 : (uint32_t)(uintptr_t)data;
}

/* Bulk lookup of up to RTE_HASH_LOOKUP_BULK_MAX keys; results as above. */
int shim_hash_lookup_bulk(void *h, const uint32_t *keys, uint32_t *results, unsigned n) {
    const void *key_ptrs[RTE_HASH_LOOKUP_BULK_MAX];
    void *data[RTE_HASH_LOOKUP_BULK_MAX];
    uint64_t hits = 0;
    if (n > RTE_HASH_LOOKUP_BULK_MAX) return -1;
    for (unsigned i = 0; i < n; i++) key_ptrs[i] = &keys[i];
    int found = rte_hash_lookup_bulk_data(h, key_ptrs, n, &hits, data);
    for (unsigned i = 0; i < n; i++) results[i] = (hits >> i) & 1 ? (uint32_t)(uintptr_t)data[i] : 0;
    return found;
}

/* ACL on the IPv4 5-tuple, laid out as DPDK's examples do. */
struct shim_tuple {
    uint8_t proto;
    uint32_t src;
    uint32_t dst;
    uint16_t sport;
    uint16_t dport;
} __attribute__((packed));

enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, F_COUNT };

static struct rte_acl_field_def fields[F_COUNT] = {
    {.type = RTE_ACL_FIELD_TYPE_BITMASK, .size = sizeof(uint8_t), .field_index = F_PROTO, .input_index = 0,
     .offset = offsetof(struct shim_tuple, proto)},
    {.type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t), .field_index = F_SRC, .input_index = 1,
     .offset = offsetof(struct shim_tuple, src)},
    {.type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t), .field_index = F_DST, .input_index = 2,
     .offset = offsetof(struct shim_tuple, dst)},
    {.type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t), .field_index = F_SPORT, .input_index = 3,
     .offset = offsetof(struct shim_tuple, sport)},
    {.type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t), .field_index = F_DPORT, .input_index = 3,
     .offset = offsetof(struct shim_tuple, dport)},
};

RTE_ACL_RULE_DEF(shim_rule, F_COUNT);

/* A rule in host byte order; proto 0 with proto_mask 0 means any. */
struct shim_acl_rule {
    uint32_t src, src_len, dst, dst_len;
    uint8_t proto, proto_mask;
    uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
};

/* Rules in priority order (first wins); a match returns index + 1. */
void *shim_acl_create(const struct shim_acl_rule *rules, int n) {
    struct rte_acl_param param = {.name = fresh_name("acl"), .socket_id = 0, .rule_size = RTE_ACL_RULE_SZ(F_COUNT),
                                  .max_rule_num = (uint32_t)n};
    struct rte_acl_ctx *ctx = rte_acl_create(&param);
    if (ctx == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        struct shim_rule r;
        memset(&r, 0, sizeof(r));
        r.data.category_mask = 1;
        r.data.priority = RTE_ACL_MAX_PRIORITY - i;
        r.data.userdata = (uint32_t)i + 1;
        r.field[F_PROTO].value.u8 = rules[i].proto;
        r.field[F_PROTO].mask_range.u8 = rules[i].proto_mask;
        r.field[F_SRC].value.u32 = rules[i].src;
        r.field[F_SRC].mask_range.u32 = rules[i].src_len;
        r.field[F_DST].value.u32 = rules[i].dst;
        r.field[F_DST].mask_range.u32 = rules[i].dst_len;
        r.field[F_SPORT].value.u16 = rules[i].sport_lo;
        r.field[F_SPORT].mask_range.u16 = rules[i].sport_hi;
        r.field[F_DPORT].value.u16 = rules[i].dport_lo;
        r.field[F_DPORT].mask_range.u16 = rules[i].dport_hi;
        if (rte_acl_add_rules(ctx, (struct rte_acl_rule *)&r, 1) < 0) {
            rte_acl_free(ctx);
            return NULL;
        }
    }
    struct rte_acl_config cfg = {.num_categories = 1, .num_fields = F_COUNT};
    memcpy(cfg.defs, fields, sizeof(fields));
    if (rte_acl_build(ctx, &cfg) < 0) {
        rte_acl_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Classifies n tuples given in host byte order (converted here, outside
 * the timed call's hot loop only when `prepared` is 0). */
int shim_acl_classify(void *ctx, const uint8_t **data, uint32_t *results, unsigned n) {
    return rte_acl_classify(ctx, data, results, n, 1);
}

/* Writes the 5-tuple in the network byte order rte_acl reads. */
void shim_acl_tuple(uint8_t *out, uint8_t proto, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport) {
    struct shim_tuple t = {.proto = proto, .src = __builtin_bswap32(src), .dst = __builtin_bswap32(dst),
                           .sport = __builtin_bswap16(sport), .dport = __builtin_bswap16(dport)};
    memcpy(out, &t, sizeof(t));
}
