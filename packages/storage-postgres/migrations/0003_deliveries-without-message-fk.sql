ALTER TABLE "postel"."deliveries" DROP CONSTRAINT "deliveries_message_id_messages_id_fk";
