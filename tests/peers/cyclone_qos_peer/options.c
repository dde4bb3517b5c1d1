/* cyclone_qos_peer: the command line (../README.md, "Command line") -> struct peer_options.
 *
 * Main thread only, before anything else runs. `PEER pub|sub [options]`: the role first, then
 * getopt_long options (`--opt value` or `--opt=value`). Any error prints one line on stderr and
 * makes the program exit 2: an unknown option, a missing or malformed value, a value out of
 * range, a pub-only option given to sub (or --time-based-filter to pub), --assert-every without
 * manual liveliness.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

enum opt_id {
  OPT_DOMAIN = 256,
  OPT_TOPIC,
  OPT_COUNT,
  OPT_KEYS,
  OPT_SIZE,
  OPT_RATE,
  OPT_WAIT_READERS,
  OPT_DISPOSE,
  OPT_UNREGISTER_REST,
  OPT_LINGER,
  OPT_TIMEOUT,
  OPT_ASSERT_EVERY,
  OPT_RELIABILITY,
  OPT_MAX_BLOCKING,
  OPT_DURABILITY,
  OPT_HISTORY,
  OPT_RESOURCE_LIMITS,
  OPT_OWNERSHIP,
  OPT_DEADLINE,
  OPT_LATENCY_BUDGET,
  OPT_LIVELINESS,
  OPT_LIFESPAN,
  OPT_DESTINATION_ORDER,
  OPT_PRESENTATION,
  OPT_PARTITION,
  OPT_USER_DATA,
  OPT_TOPIC_DATA,
  OPT_GROUP_DATA,
  OPT_TIME_BASED_FILTER,
  OPT_DATA_REPRESENTATION,
  OPT_END
};

static const struct option long_options[] = {
    {"domain", required_argument, NULL, OPT_DOMAIN},
    {"topic", required_argument, NULL, OPT_TOPIC},
    {"count", required_argument, NULL, OPT_COUNT},
    {"keys", required_argument, NULL, OPT_KEYS},
    {"size", required_argument, NULL, OPT_SIZE},
    {"rate", required_argument, NULL, OPT_RATE},
    {"wait-readers", required_argument, NULL, OPT_WAIT_READERS},
    {"dispose", required_argument, NULL, OPT_DISPOSE},
    {"unregister-rest", no_argument, NULL, OPT_UNREGISTER_REST},
    {"linger", required_argument, NULL, OPT_LINGER},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"assert-every", required_argument, NULL, OPT_ASSERT_EVERY},
    {"reliability", required_argument, NULL, OPT_RELIABILITY},
    {"max-blocking", required_argument, NULL, OPT_MAX_BLOCKING},
    {"durability", required_argument, NULL, OPT_DURABILITY},
    {"history", required_argument, NULL, OPT_HISTORY},
    {"resource-limits", required_argument, NULL, OPT_RESOURCE_LIMITS},
    {"ownership", required_argument, NULL, OPT_OWNERSHIP},
    {"deadline", required_argument, NULL, OPT_DEADLINE},
    {"latency-budget", required_argument, NULL, OPT_LATENCY_BUDGET},
    {"liveliness", required_argument, NULL, OPT_LIVELINESS},
    {"lifespan", required_argument, NULL, OPT_LIFESPAN},
    {"destination-order", required_argument, NULL, OPT_DESTINATION_ORDER},
    {"presentation", required_argument, NULL, OPT_PRESENTATION},
    {"partition", required_argument, NULL, OPT_PARTITION},
    {"user-data", required_argument, NULL, OPT_USER_DATA},
    {"topic-data", required_argument, NULL, OPT_TOPIC_DATA},
    {"group-data", required_argument, NULL, OPT_GROUP_DATA},
    {"time-based-filter", required_argument, NULL, OPT_TIME_BASED_FILTER},
    {"data-representation", required_argument, NULL, OPT_DATA_REPRESENTATION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

static const char usage_text[] =
    "usage: " PEER_NAME
    " pub|sub [options]   (tests/peers/README.md)\n"
    "  --domain N  --topic NAME  --count N  --timeout S  --linger S\n"
    "  pub: --keys K  --size B  --rate HZ  --wait-readers N  --dispose ID (repeatable)\n"
    "       --unregister-rest  --assert-every MS\n"
    "  QoS: --reliability reliable|best_effort  --max-blocking MS\n"
    "       --durability volatile|transient_local  --history keep_last:N|keep_all\n"
    "       --resource-limits MAX_SAMPLES:MAX_INSTANCES:MAX_SAMPLES_PER_INSTANCE\n"
    "       --ownership shared|exclusive[:STRENGTH]  --deadline MS  --latency-budget MS\n"
    "       --liveliness automatic|manual_by_participant|manual_by_topic[:LEASE_MS]\n"
    "       --lifespan MS (pub)  --destination-order reception|source\n"
    "       --presentation instance|topic|group[:coherent][:ordered]  --partition NAME\n"
    "       --user-data TEXT  --topic-data TEXT  --group-data TEXT\n"
    "       --time-based-filter MS (sub)  --data-representation xcdr1|xcdr2\n"
    "stdout: JSON lines; exit 0 ok, 1 timeout or failure, 2 bad arguments\n";

/* The option being parsed ("--deadline"), to start messages with; "" for none. */
static char current_option[64];

static void set_current_option(const char* text) {
  snprintf(current_option, sizeof current_option, "%s", text);
}

static const char* option_name(int id) {
  for (const struct option* p = long_options; p->name != NULL; p++) {
    if (p->val == id) return p->name;
  }
  return "?";
}

static int bad(const char* fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  out_error("%s%s%s", current_option, *current_option ? ": " : "", msg);
  return 2;
}

/* A whole decimal integer in [min, max]. */
static int parse_int(const char* text, int64_t min, int64_t max, int64_t* out) {
  char* end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return bad("'%s' is not an integer", text);
  if (v < min || v > max) {
    return bad("%s is out of range %lld..%lld", text, (long long)min, (long long)max);
  }
  *out = v;
  return 0;
}

static int parse_int32(const char* text, int64_t min, int64_t max, int32_t* out) {
  int64_t v;
  int rc = parse_int(text, min, max, &v);
  if (rc == 0) *out = (int32_t)v;
  return rc;
}

/* Milliseconds for a QoS duration or a period: 0 .. 10^9 (about 11 days). */
static int parse_ms(const char* text, int64_t* out) {
  return parse_int(text, 0, 1000000000, out);
}

/* A non-negative finite number (seconds, Hz). */
static int parse_number(const char* text, double* out) {
  char* end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < 0 || v > 1e9) {
    return bad("'%s' is not a number >= 0", text);
  }
  *out = v;
  return 0;
}

/* text equal to one of names[0..n-1]: its index in *out. */
static int parse_word(const char* text, const char* const* names, int n, int* out) {
  char expected[160] = "";
  for (int i = 0; i < n; i++) {
    if (strcmp(text, names[i]) == 0) {
      *out = i;
      return 0;
    }
    const char* sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
    snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%s", sep,
             names[i]);
  }
  return bad("'%s': expected %s", text, expected);
}

/* "WORD" or "WORD:REST": copies WORD into word, returns REST or NULL. */
static const char* split_colon(const char* text, char* word, size_t size) {
  const char* colon = strchr(text, ':');
  size_t n = colon ? (size_t)(colon - text) : strlen(text);
  if (n >= size) n = size - 1;
  memcpy(word, text, n);
  word[n] = '\0';
  return colon ? colon + 1 : NULL;
}

static int parse_history(const char* text, struct peer_qos* q) {
  if (strcmp(text, "keep_all") == 0) {
    q->history = DDS_HISTORY_KEEP_ALL;
    q->history_depth = 1;
    return 0;
  }
  if (strncmp(text, "keep_last:", 10) != 0) return bad("expected keep_last:N or keep_all");
  q->history = DDS_HISTORY_KEEP_LAST;
  return parse_int32(text + 10, 1, INT32_MAX, &q->history_depth);
}

static int parse_resource_limits(const char* text, struct peer_qos* q) {
  char buf[96];
  int32_t* fields[3] = {&q->max_samples, &q->max_instances, &q->max_samples_per_instance};
  const char* rest = text;
  for (int i = 0; i < 3; i++) {
    if (rest == NULL) return bad("expected MAX_SAMPLES:MAX_INSTANCES:MAX_SAMPLES_PER_INSTANCE");
    rest = split_colon(rest, buf, sizeof buf);
    if (parse_int32(buf, -1, INT32_MAX, fields[i]) != 0) return 2;
    if (*fields[i] == 0) return bad("0 is not a limit (-1 = unlimited)");
  }
  if (rest != NULL) return bad("expected MAX_SAMPLES:MAX_INSTANCES:MAX_SAMPLES_PER_INSTANCE");
  q->has_resource_limits = true;
  return 0;
}

static int parse_ownership(const char* text, struct peer_qos* q) {
  static const char* const kinds[] = {"shared", "exclusive"};
  char word[32];
  int kind = 0;
  const char* strength = split_colon(text, word, sizeof word);
  if (parse_word(word, kinds, 2, &kind) != 0) return 2;
  q->has_ownership = true;
  q->ownership = kind == 0 ? DDS_OWNERSHIP_SHARED : DDS_OWNERSHIP_EXCLUSIVE;
  q->has_strength = false;
  if (strength == NULL) return 0;
  if (kind == 0) return bad("a strength goes with exclusive only");
  q->has_strength = true;
  return parse_int32(strength, INT32_MIN, INT32_MAX, &q->strength);
}

static int parse_liveliness(const char* text, struct peer_qos* q) {
  static const char* const kinds[] = {"automatic", "manual_by_participant", "manual_by_topic"};
  static const dds_liveliness_kind_t values[] = {DDS_LIVELINESS_AUTOMATIC,
                                                 DDS_LIVELINESS_MANUAL_BY_PARTICIPANT,
                                                 DDS_LIVELINESS_MANUAL_BY_TOPIC};
  char word[32];
  int kind = 0;
  const char* lease = split_colon(text, word, sizeof word);
  if (parse_word(word, kinds, 3, &kind) != 0) return 2;
  q->has_liveliness = true;
  q->liveliness = values[kind];
  q->lease_ms = -1;
  if (lease == NULL) return 0;
  if (parse_ms(lease, &q->lease_ms) != 0) return 2;
  return q->lease_ms == 0 ? bad("a lease of 0 ms") : 0;
}

static int parse_presentation(const char* text, struct peer_qos* q) {
  static const char* const scopes[] = {"instance", "topic", "group"};
  static const dds_presentation_access_scope_kind_t values[] = {
      DDS_PRESENTATION_INSTANCE, DDS_PRESENTATION_TOPIC, DDS_PRESENTATION_GROUP};
  char word[32];
  int scope = 0;
  const char* rest = split_colon(text, word, sizeof word);
  if (parse_word(word, scopes, 3, &scope) != 0) return 2;
  q->has_presentation = true;
  q->access_scope = values[scope];
  q->coherent = q->ordered = false;
  while (rest != NULL) {
    rest = split_colon(rest, word, sizeof word);
    if (strcmp(word, "coherent") == 0) {
      q->coherent = true;
    } else if (strcmp(word, "ordered") == 0) {
      q->ordered = true;
    } else {
      return bad("'%s' is neither coherent nor ordered", word);
    }
  }
  return 0;
}

/* The policies with one keyword value each. */
static int parse_kind_option(int id, const char* arg, struct peer_qos* q) {
  static const char* const reliability[] = {"reliable", "best_effort"};
  static const char* const durability[] = {"volatile", "transient_local"};
  static const char* const order[] = {"reception", "source"};
  static const char* const representation[] = {"xcdr1", "xcdr2"};
  int k = 0;
  switch (id) {
    case OPT_RELIABILITY:
      if (parse_word(arg, reliability, 2, &k) != 0) return 2;
      q->reliability = k == 0 ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT;
      return 0;
    case OPT_DURABILITY:
      if (parse_word(arg, durability, 2, &k) != 0) return 2;
      q->has_durability = true;
      q->durability = k == 0 ? DDS_DURABILITY_VOLATILE : DDS_DURABILITY_TRANSIENT_LOCAL;
      return 0;
    case OPT_DESTINATION_ORDER:
      if (parse_word(arg, order, 2, &k) != 0) return 2;
      q->has_destination_order = true;
      q->destination_order = k == 0 ? DDS_DESTINATIONORDER_BY_RECEPTION_TIMESTAMP
                                    : DDS_DESTINATIONORDER_BY_SOURCE_TIMESTAMP;
      return 0;
    default: /* OPT_DATA_REPRESENTATION */
      if (parse_word(arg, representation, 2, &k) != 0) return 2;
      q->data_representation =
          k == 0 ? DDS_DATA_REPRESENTATION_XCDR1 : DDS_DATA_REPRESENTATION_XCDR2;
      return 0;
  }
}

static int parse_qos_option(int id, const char* arg, struct peer_qos* q) {
  switch (id) {
    case OPT_RELIABILITY:
    case OPT_DURABILITY:
    case OPT_DESTINATION_ORDER:
    case OPT_DATA_REPRESENTATION:
      return parse_kind_option(id, arg, q);
    case OPT_MAX_BLOCKING:
      return parse_ms(arg, &q->max_blocking_ms);
    case OPT_HISTORY:
      return parse_history(arg, q);
    case OPT_RESOURCE_LIMITS:
      return parse_resource_limits(arg, q);
    case OPT_OWNERSHIP:
      return parse_ownership(arg, q);
    case OPT_DEADLINE:
      return parse_ms(arg, &q->deadline_ms);
    case OPT_LATENCY_BUDGET:
      return parse_ms(arg, &q->latency_budget_ms);
    case OPT_LIVELINESS:
      return parse_liveliness(arg, q);
    case OPT_LIFESPAN:
      return parse_ms(arg, &q->lifespan_ms);
    case OPT_PRESENTATION:
      return parse_presentation(arg, q);
    case OPT_PARTITION:
      if (q->n_partitions == PEER_MAX_LIST) return bad("more than %d partitions", PEER_MAX_LIST);
      q->partitions[q->n_partitions++] = arg;
      return 0;
    case OPT_USER_DATA:
      q->user_data = arg;
      return 0;
    case OPT_TOPIC_DATA:
      q->topic_data = arg;
      return 0;
    case OPT_GROUP_DATA:
      q->group_data = arg;
      return 0;
    case OPT_TIME_BASED_FILTER:
      return parse_ms(arg, &q->time_based_filter_ms);
    default:
      return bad("internal error: option %d", id);
  }
}

static int parse_general_option(int id, const char* arg, struct peer_options* o) {
  int64_t v;
  switch (id) {
    case OPT_DOMAIN:
      if (parse_int(arg, 0, 232, &v) != 0) return 2; /* DDSI's port mapping allows 0..232 */
      o->domain = (uint32_t)v;
      return 0;
    case OPT_TOPIC:
      if (*arg == '\0') return bad("an empty topic name");
      o->topic = arg;
      return 0;
    case OPT_COUNT:
      return parse_int32(arg, 0, INT32_MAX, &o->count);
    case OPT_KEYS:
      return parse_int32(arg, 1, INT32_MAX, &o->keys);
    case OPT_SIZE:
      if (parse_int(arg, 0, 64 << 20, &v) != 0) return 2;
      o->size = (uint32_t)v;
      return 0;
    case OPT_RATE:
      return parse_number(arg, &o->rate);
    case OPT_WAIT_READERS:
      return parse_int32(arg, 0, INT32_MAX, &o->wait_readers);
    case OPT_DISPOSE:
      if (o->n_dispose == PEER_MAX_LIST) return bad("more than %d ids", PEER_MAX_LIST);
      return parse_int32(arg, INT32_MIN, INT32_MAX, &o->dispose[o->n_dispose++]);
    case OPT_UNREGISTER_REST:
      o->unregister_rest = true;
      return 0;
    case OPT_LINGER:
      return parse_number(arg, &o->linger_s);
    case OPT_TIMEOUT:
      return parse_number(arg, &o->timeout_s);
    case OPT_ASSERT_EVERY:
      return parse_ms(arg, &o->assert_every_ms);
    default:
      return parse_qos_option(id, arg, &o->qos);
  }
}

static void set_defaults(struct peer_options* o, enum peer_role role) {
  memset(o, 0, sizeof *o);
  o->role = role;
  o->linger_s = role == PEER_PUB ? 3 : 0; /* sub: --linger is an extension (README.md) */
  o->topic = "QosTest";
  o->count = 10;
  o->keys = 1;
  o->size = 16;
  o->rate = 100;
  o->timeout_s = 30;
  o->qos.reliability = DDS_RELIABILITY_RELIABLE;
  o->qos.max_blocking_ms = 100;
  o->qos.history = DDS_HISTORY_KEEP_ALL;
  o->qos.history_depth = 1;
  o->qos.deadline_ms = o->qos.latency_budget_ms = o->qos.lifespan_ms = -1;
  o->qos.time_based_filter_ms = -1;
  o->qos.lease_ms = -1;
  o->qos.data_representation = -1;
}

/* Options that only one role has, and --assert-every's precondition. */
static int check_roles(const struct peer_options* o, const bool* given) {
  static const int pub_only[] = {OPT_KEYS,         OPT_SIZE,    OPT_RATE,
                                 OPT_WAIT_READERS, OPT_DISPOSE, OPT_UNREGISTER_REST,
                                 OPT_ASSERT_EVERY, OPT_LIFESPAN};
  set_current_option("");
  for (size_t i = 0; i < sizeof pub_only / sizeof pub_only[0]; i++) {
    if (o->role == PEER_SUB && given[pub_only[i]]) {
      return bad("--%s is a pub option", option_name(pub_only[i]));
    }
  }
  if (o->role == PEER_PUB && given[OPT_TIME_BASED_FILTER]) {
    return bad("--time-based-filter is a sub option");
  }
  if (o->assert_every_ms > 0 &&
      (!o->qos.has_liveliness || o->qos.liveliness == DDS_LIVELINESS_AUTOMATIC)) {
    return bad("--assert-every needs --liveliness manual_by_participant or manual_by_topic");
  }
  return 0;
}

/* argv[1]: 0 with *role set, -1 after printing the usage (--help), 2 after an error. */
static int parse_role(int argc, char** argv, enum peer_role* role) {
  if (argc < 2) return bad("missing role: pub or sub (see --help)");
  if (strcmp(argv[1], "pub") == 0) {
    *role = PEER_PUB;
  } else if (strcmp(argv[1], "sub") == 0) {
    *role = PEER_SUB;
  } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(usage_text, stdout);
    return -1;
  } else {
    return bad("the first argument must be pub or sub, not '%s'", argv[1]);
  }
  return 0;
}

int peer_parse_options(int argc, char** argv, struct peer_options* o) {
  bool given[OPT_END] = {false};
  enum peer_role role = PEER_PUB;
  int rc = parse_role(argc, argv, &role);
  if (rc != 0) return rc;
  set_defaults(o, role);
  opterr = 0;
  optind = 2;
  for (;;) {
    int id = getopt_long(argc, argv, "+:h", long_options, NULL);
    if (id == -1) break;
    if (id == 'h') {
      fputs(usage_text, stdout);
      return -1;
    }
    set_current_option(argv[optind - 1]); /* unknown option, or one missing its value */
    if (id == '?') return bad("unknown option (see --help)");
    if (id == ':') return bad("needs a value");
    set_current_option("--");
    strncat(current_option, option_name(id), sizeof current_option - 3);
    given[id] = true;
    if (parse_general_option(id, optarg, o) != 0) return 2;
  }
  set_current_option("");
  if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
  return check_roles(o, given);
}
