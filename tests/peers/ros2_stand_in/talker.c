/* ros2_talker: a ROS 2 node's traffic without ROS 2 (Debian 12 has none): a Cyclone DDS
 * application that publishes with ROS 2's names on the wire - topics rt/chatter
 * (std_msgs/msg/String), rt/pose (geometry_msgs/msg/PoseStamped) and rt/imu
 * (sensor_msgs/msg/Imu), DDS types std_msgs::msg::dds_::String_ and so on (ros2_msgs.idl).
 *
 *   ros2_talker [--count N] [--domain D] [--wait-readers N] [--timeout S] [--transient-local]
 *
 * Waits until every writer has --wait-readers matched readers (default 1), writes sample i = 0 ..
 * N-1 (default 10) on each topic (values: value_of_* below, which the tests recompute), waits for
 * the readers' acknowledgements, prints "written N" and exits 0; 1 on a DDS error or timeout
 * (default 30 s), 2 on a bad command line. Reliable, keep-all; --transient-local makes the
 * writers TRANSIENT_LOCAL. Type information (XTypes) is announced, so TypeLookup finds the types.
 */
#include <dds/dds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ros2_msgs.h"

struct options {
  int count, domain, wait_readers;
  double timeout_s;
  int transient_local;
};

static int usage(const char* why) {
  fprintf(stderr,
          "ros2_talker: %s\nusage: ros2_talker [--count N] [--domain D] "
          "[--wait-readers N] [--timeout S] [--transient-local]\n",
          why);
  return 2;
}

static int parse(int argc, char** argv, struct options* o) {
  *o = (struct options){10, 0, 1, 30.0, 0};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "--transient-local") == 0) {
      o->transient_local = 1;
      continue;
    }
    if (i + 1 >= argc) return usage("an option without its value, or an unknown option");
    char* end = NULL;
    const char* v = argv[++i];
    if (strcmp(a, "--timeout") == 0) {
      o->timeout_s = strtod(v, &end);
    } else {
      long n = strtol(v, &end, 10);
      if (n < 0 || n > 1000000) return usage("a value out of range");
      if (strcmp(a, "--count") == 0)
        o->count = (int)n;
      else if (strcmp(a, "--domain") == 0)
        o->domain = (int)n;
      else if (strcmp(a, "--wait-readers") == 0)
        o->wait_readers = (int)n;
      else
        return usage("unknown option");
    }
    if (*end != '\0' || end == v) return usage("not a number");
  }
  return 0;
}

static void stamp(builtin_interfaces_msg_dds__Time_* t, int i) {
  t->sec = 1700000000 + i;
  t->nanosec = (uint32_t)i * 1000u + 7u;
}

static void value_of_pose(geometry_msgs_msg_dds__PoseStamped_* p, int i) {
  stamp(&p->header.stamp, i);
  p->header.frame_id = "map";
  p->pose.position = (geometry_msgs_msg_dds__Point_){i * 1.0, i * 2.0, i * 0.5};
  p->pose.orientation = (geometry_msgs_msg_dds__Quaternion_){0.0, 0.0, 0.0, 1.0};
}

static void value_of_imu(sensor_msgs_msg_dds__Imu_* m, int i) {
  stamp(&m->header.stamp, i);
  m->header.frame_id = "imu_link";
  m->orientation = (geometry_msgs_msg_dds__Quaternion_){0.0, 0.0, 0.0, 1.0};
  m->angular_velocity = (geometry_msgs_msg_dds__Vector3_){0.25 * i, 0.0, -0.25 * i};
  m->linear_acceleration = (geometry_msgs_msg_dds__Vector3_){0.0, 0.0, 9.75};
  for (int k = 0; k < 9; k++) {
    m->orientation_covariance[k] = k;
    m->angular_velocity_covariance[k] = k + 0.5;
    m->linear_acceleration_covariance[k] = -k;
  }
}

static int matched(dds_entity_t w) {
  dds_publication_matched_status_t st;
  return dds_get_publication_matched_status(w, &st) == DDS_RETCODE_OK ? (int)st.current_count : 0;
}

int main(int argc, char** argv) {
  struct options o;
  if (parse(argc, argv, &o) != 0) return 2;
  const dds_entity_t pp = dds_create_participant((dds_domainid_t)o.domain, NULL, NULL);
  if (pp < 0) return fprintf(stderr, "ros2_talker: participant: %s\n", dds_strretcode(pp)), 1;
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
  dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  if (o.transient_local) dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
  const dds_topic_descriptor_t* desc[3] = {&std_msgs_msg_dds__String__desc,
                                           &geometry_msgs_msg_dds__PoseStamped__desc,
                                           &sensor_msgs_msg_dds__Imu__desc};
  const char* names[3] = {"rt/chatter", "rt/pose", "rt/imu"};
  dds_entity_t w[3];
  for (int k = 0; k < 3; k++) {
    const dds_entity_t t = dds_create_topic(pp, desc[k], names[k], NULL, NULL);
    w[k] = t < 0 ? t : dds_create_writer(pp, t, q, NULL);
    if (w[k] < 0)
      return fprintf(stderr, "ros2_talker: %s: %s\n", names[k], dds_strretcode(w[k])), 1;
  }
  dds_delete_qos(q);
  const dds_time_t give_up = dds_time() + (dds_duration_t)(o.timeout_s * 1e9);
  for (int k = 0; k < 3; k++) {
    while (matched(w[k]) < o.wait_readers) {
      if (dds_time() > give_up) {
        fprintf(stderr, "ros2_talker: %s: %d of %d readers after %g s\n", names[k], matched(w[k]),
                o.wait_readers, o.timeout_s);
        dds_delete(pp);
        return 1;
      }
      dds_sleepfor(DDS_MSECS(10));
    }
  }
  char text[64];
  for (int i = 0; i < o.count; i++) {
    snprintf(text, sizeof text, "hello world %d", i);
    std_msgs_msg_dds__String_ s = {text};
    geometry_msgs_msg_dds__PoseStamped_ p;
    sensor_msgs_msg_dds__Imu_ m;
    value_of_pose(&p, i);
    value_of_imu(&m, i);
    const void* v[3] = {&s, &p, &m};
    for (int k = 0; k < 3; k++) {
      dds_return_t rc = dds_write(w[k], v[k]);
      if (rc != DDS_RETCODE_OK) {
        fprintf(stderr, "ros2_talker: write %s: %s\n", names[k], dds_strretcode(rc));
        dds_delete(pp);
        return 1;
      }
    }
  }
  for (int k = 0; k < 3; k++) {
    dds_return_t rc = dds_wait_for_acks(w[k], give_up - dds_time());
    if (rc != DDS_RETCODE_OK) {
      fprintf(stderr, "ros2_talker: %s: not acknowledged: %s\n", names[k], dds_strretcode(rc));
      dds_delete(pp);
      return 1;
    }
  }
  printf("written %d\n", o.count);
  fflush(stdout);
  dds_delete(pp);
  return 0;
}
