#!/bin/bash

for ((i=0; i<5369; i++))
do
    echo -e "    else if(val == $i) {"
    echo -e "        printf(\"%d\\\n\", $((i+1)));"
    echo -e "    }"
done
