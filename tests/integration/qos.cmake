# Fidelity to the system recorded (tests/integration/qos/): writers of every QoS policy recorded
# from one vendor and replayed into readers of another that request what the original offered.
# The first three pairs cover every vendor on each side: recorded from Cyclone DDS, Fast DDS and
# libpubsub, replayed into Fast DDS, libpubsub and Cyclone DDS; the fourth gives libpubsub
# readers the BY_SOURCE_TIMESTAMP writer that Fast DDS cannot offer (README, "QoS fidelity").
set(IT ${CMAKE_CURRENT_SOURCE_DIR})
foreach(pair "cyclone fastdds" "fastdds pubsub" "pubsub cyclone" "cyclone pubsub")
  string(REPLACE " " ";" ends "${pair}")
  list(GET ends 0 from)
  list(GET ends 1 to)
  pubsub_netns_test("qos: every policy recorded from ${from} and replayed into ${to} readers that ask for it"
                    ${IT}/qos/fidelity.sh ${from} ${to})
endforeach()
# Latched state: play --start after a durable writer's last sample still gives a durable reader
# its last samples per instance, and a durable reader joining a running replay gets them from the
# replay writer's history (Cyclone DDS readers; key hashes computed from the recorded type).
pubsub_netns_test("qos: durable writers' latched state at play --start and for late joiners of a replay"
                  ${IT}/qos/latched.sh cyclone cyclone)
foreach(pair "pubsub fastdds" "cyclone pubsub")
  string(REPLACE " " ";" ends "${pair}")
  list(GET ends 0 from)
  list(GET ends 1 to)
  pubsub_netns_test("qos: latched state of a ${from} durable writer for ${to} readers"
                    ${IT}/qos/latched.sh ${from} ${to})
endforeach()
# Liveliness through gaps longer than the lease: MANUAL_BY_TOPIC (the replay writer's liveliness
# HEARTBEATs), MANUAL_BY_PARTICIPANT (participant messages) and AUTOMATIC (SPDP announcements).
pubsub_netns_test("qos: a MANUAL_BY_TOPIC writer replayed with gaps longer than its lease stays alive"
                  ${IT}/qos/liveliness.sh)
# A writer the recorder cannot read (XML data representation) is listed with the reason, not lost.
pubsub_netns_test("qos: a writer the recorder cannot read is listed in info with the reason"
                  ${IT}/qos/not_matched.sh)
