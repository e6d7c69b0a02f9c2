set -e
B=swift-ring-builder
$B mixed.builder create 6 3 1
$B mixed.builder add --region 1 --zone 1 --ip 10.0.1.1 --port 6200 --replication-ip 10.1.1.1 --replication-port 6300 --device sda --weight 100 --meta "rack a"
$B mixed.builder add --region 1 --zone 1 --ip 10.0.1.2 --port 6200 --device sda --weight 100
$B mixed.builder add --region 1 --zone 2 --ip 10.0.2.1 --port 6200 --device sda --weight 200
$B mixed.builder add --region 1 --zone 2 --ip 10.0.2.1 --port 6200 --device sdb --weight 50
$B mixed.builder add --region 2 --zone 1 --ip fd00::1 --port 6200 --device sda --weight 150
$B mixed.builder add --region 2 --zone 2 --ip 10.2.2.1 --port 6200 --device sda --weight 100
$B mixed.builder rebalance --seed 7 || true
$B mixed.builder remove --id 1 --yes || $B mixed.builder remove --id 1
$B mixed.builder pretend_min_part_hours_passed
$B mixed.builder rebalance --seed 8 || true
$B mixed.builder write_ring
$B frac.builder create 5 2.5 0
$B frac.builder add --region 1 --zone 1 --ip 10.0.0.1 --port 6200 --device d1 --weight 1
$B frac.builder add --region 1 --zone 2 --ip 10.0.0.2 --port 6200 --device d1 --weight 1
$B frac.builder add --region 1 --zone 3 --ip 10.0.0.3 --port 6200 --device d1 --weight 1
$B frac.builder rebalance --seed 3 || true
