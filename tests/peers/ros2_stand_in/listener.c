/* ros2_listener: a ROS 2 node's subscription without ROS 2 - a Cyclone DDS reader of rt/chatter
 * (std_msgs/msg/String), rt/pose (geometry_msgs/msg/PoseStamped) or rt/imu (sensor_msgs/msg/Imu)
 * under ROS 2's DDS names (ros2_msgs.idl), printing each sample it takes as one JSON line:
 *   {"topic":"rt/chatter","value":{"data":"hello world 3"}}
 * with the members as in the .msg files (doubles with 17 significant digits).
 *
 *   ros2_listener --topic rt/chatter|rt/pose|rt/imu [--count N] [--domain D] [--timeout S]
 *                 [--transient-local] [--keep-last N]
 *
 * Reliable; keep-all unless --keep-last. Prints "ready" on stderr once the reader exists, exits 0
 * after --count samples (default 10), 1 on a DDS error or when --timeout (default 30 s) passes
 * first, 2 on a bad command line. Type information (XTypes) is announced by the reader, so a
 * writer whose type differs is not matched.
 */
#include <dds/dds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ros2_msgs.h"

static int usage(const char* why) {
  fprintf(stderr,
          "ros2_listener: %s\nusage: ros2_listener --topic rt/chatter|rt/pose|rt/imu [--count N] "
          "[--domain D] [--timeout S] [--transient-local] [--keep-last N]\n",
          why);
  return 2;
}

static void print_stamp(const std_msgs_msg_dds__Header_* h) {
  printf("\"header\":{\"stamp\":{\"sec\":%d,\"nanosec\":%u},\"frame_id\":\"%s\"}", h->stamp.sec,
         h->stamp.nanosec, h->frame_id);
}

static void print_xyz(const char* name, double x, double y, double z) {
  printf("\"%s\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g}", name, x, y, z);
}

static void print_quat(const char* name, const geometry_msgs_msg_dds__Quaternion_* q) {
  printf("\"%s\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g,\"w\":%.17g}", name, q->x, q->y, q->z, q->w);
}

static void print_nine(const char* name, const double* v) {
  printf("\"%s\":[", name);
  for (int k = 0; k < 9; k++) printf("%s%.17g", k ? "," : "", v[k]);
  printf("]");
}

static void print_sample(int kind, const void* s) {
  static const char* names[3] = {"rt/chatter", "rt/pose", "rt/imu"};
  printf("{\"topic\":\"%s\",\"value\":{", names[kind]);
  if (kind == 0) {
    printf("\"data\":\"%s\"", ((const std_msgs_msg_dds__String_*)s)->data);
  } else if (kind == 1) {
    const geometry_msgs_msg_dds__PoseStamped_* p = s;
    print_stamp(&p->header);
    printf(",\"pose\":{");
    print_xyz("position", p->pose.position.x, p->pose.position.y, p->pose.position.z);
    printf(",");
    print_quat("orientation", &p->pose.orientation);
    printf("}");
  } else {
    const sensor_msgs_msg_dds__Imu_* m = s;
    print_stamp(&m->header);
    printf(",");
    print_quat("orientation", &m->orientation);
    printf(",");
    print_nine("orientation_covariance", m->orientation_covariance);
    printf(",");
    print_xyz("angular_velocity", m->angular_velocity.x, m->angular_velocity.y,
              m->angular_velocity.z);
    printf(",");
    print_nine("angular_velocity_covariance", m->angular_velocity_covariance);
    printf(",");
    print_xyz("linear_acceleration", m->linear_acceleration.x, m->linear_acceleration.y,
              m->linear_acceleration.z);
    printf(",");
    print_nine("linear_acceleration_covariance", m->linear_acceleration_covariance);
  }
  printf("}}\n");
  fflush(stdout);
}

int main(int argc, char** argv) {
  const char* topic = NULL;
  int count = 10, domain = 0, transient_local = 0, keep_last = 0;
  double timeout_s = 30.0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--transient-local") == 0) {
      transient_local = 1;
      continue;
    }
    if (i + 1 >= argc) return usage("an option without its value, or an unknown option");
    const char* v = argv[++i];
    char* end = NULL;
    if (strcmp(argv[i - 1], "--topic") == 0) {
      topic = v;
      continue;
    }
    if (strcmp(argv[i - 1], "--timeout") == 0) {
      timeout_s = strtod(v, &end);
    } else {
      long n = strtol(v, &end, 10);
      if (n < 0 || n > 1000000) return usage("a value out of range");
      if (strcmp(argv[i - 1], "--count") == 0)
        count = (int)n;
      else if (strcmp(argv[i - 1], "--domain") == 0)
        domain = (int)n;
      else if (strcmp(argv[i - 1], "--keep-last") == 0)
        keep_last = (int)n;
      else
        return usage("unknown option");
    }
    if (*end != '\0' || end == v) return usage("not a number");
  }
  const dds_topic_descriptor_t* desc[3] = {&std_msgs_msg_dds__String__desc,
                                           &geometry_msgs_msg_dds__PoseStamped__desc,
                                           &sensor_msgs_msg_dds__Imu__desc};
  const char* names[3] = {"rt/chatter", "rt/pose", "rt/imu"};
  int kind = -1;
  for (int k = 0; k < 3; k++)
    if (topic && strcmp(topic, names[k]) == 0) kind = k;
  if (kind < 0) return usage("--topic must be rt/chatter, rt/pose or rt/imu");

  const dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
  if (pp < 0) return fprintf(stderr, "ros2_listener: participant: %s\n", dds_strretcode(pp)), 1;
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
  if (keep_last > 0)
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, keep_last);
  else
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  if (transient_local) dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
  const dds_entity_t t = dds_create_topic(pp, desc[kind], names[kind], NULL, NULL);
  const dds_entity_t r = t < 0 ? t : dds_create_reader(pp, t, q, NULL);
  dds_delete_qos(q);
  if (r < 0) return fprintf(stderr, "ros2_listener: reader: %s\n", dds_strretcode(r)), 1;
  fprintf(stderr, "ready\n");
  const dds_time_t give_up = dds_time() + (dds_duration_t)(timeout_s * 1e9);
  int got = 0;
  void* samples[1] = {NULL};
  dds_sample_info_t info[1];
  while (got < count && dds_time() < give_up) {
    const int n = dds_take(r, samples, info, 1, 1);
    if (n < 0) {
      fprintf(stderr, "ros2_listener: take: %s\n", dds_strretcode(n));
      break;
    }
    if (n == 0) {
      dds_sleepfor(DDS_MSECS(5));
      continue;
    }
    if (info[0].valid_data) {
      print_sample(kind, samples[0]);
      got++;
    }
    dds_return_loan(r, samples, n);
  }
  dds_delete(pp);
  if (got < count)
    fprintf(stderr, "ros2_listener: %d of %d samples within %g s\n", got, count, timeout_s);
  return got < count ? 1 : 0;
}
